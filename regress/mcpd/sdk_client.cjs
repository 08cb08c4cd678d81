// SPDX-License-Identifier: ISC
// mcpd driven by the official MCP TypeScript SDK client (Client +
// StdioClientTransport), against fake_runnerd.py: tools, progress,
// cancellation and logging.  For t_sdk.sh.
// Usage: NODE_PATH=<dir>/node_modules node sdk_client.cjs MCPD CONF
"use strict";

const fs = require("fs");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");
const { McpError, LoggingMessageNotificationSchema, EmptyResultSchema } =
    require("@modelcontextprotocol/sdk/types.js");

const [mcpd, conf] = process.argv.slice(2);
let passed = 0, failed = 0;

function check(cond, what) {
	if (cond) {
		passed++;
	} else {
		failed++;
		console.error("FAIL: " + what);
	}
}

function forwarded() {
	if (!fs.existsSync("calls.jsonl"))
		return [];
	return fs.readFileSync("calls.jsonl", "utf8").split("\n")
	    .filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

function text(r) {
	return r.content.map((c) => c.text).join(" ");
}

async function main() {
	const transport = new StdioClientTransport({
		command: mcpd, args: ["-v", "-f", conf], stderr: "inherit",
	});
	const client = new Client({ name: "sdk-check", version: "1.0.0" },
	    { capabilities: {} });
	await client.connect(transport);
	check(client.getServerVersion().name === "agent-sandbox-mcpd",
	    "serverInfo");
	check(client.getServerCapabilities().tools !== undefined,
	    "tools capability");
	await client.ping();

	const { tools } = await client.listTools();
	const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
	for (const n of ["k8s_get_pod_status", "terraform_plan",
	    "terraform_apply", "run_python", "run_shell", "write_file",
	    "read_file", "reset", "close_session"])
		check(byName[n] !== undefined, "tools/list lacks " + n);
	check(byName.terraform_apply.annotations.destructiveHint === true &&
	    byName.k8s_get_pod_status.annotations.readOnlyHint === true,
	    "annotations");
	check(byName.k8s_get_pod_status.inputSchema.required[0] ===
	    "namespace", "inputSchema");

	// End to end; the SDK checks structuredContent against outputSchema.
	let r = await client.callTool({ name: "k8s_get_pod_status",
	    arguments: { namespace: "default" } });
	check(!r.isError && r.structuredContent.pods.length === 2,
	    "pod status: " + JSON.stringify(r));

	r = await client.callTool({ name: "k8s_get_pod_status",
	    arguments: { namespace: "Not_A_Label" } });
	check(r.isError === true && text(r).includes("DNS-1123"),
	    "bad namespace: " + JSON.stringify(r));
	r = await client.callTool({ name: "terraform_plan",
	    arguments: { working_dir: "/etc" } });
	check(r.isError === true && text(r).includes("relative path"),
	    "absolute working_dir: " + JSON.stringify(r));
	check(forwarded().length === 1, "invalid calls reached runnerd");

	r = await client.callTool({ name: "run_shell",
	    arguments: { command: "fail" } });
	check(r.isError === true && text(r).includes("exit 2"),
	    "tool failure: " + JSON.stringify(r));

	try {
		await client.callTool({ name: "rm_rf", arguments: {} });
		check(false, "unknown tool accepted");
	} catch (e) {
		check(e instanceof McpError && e.code === -32602,
		    "unknown tool: " + e);
	}

	// Progress while a call runs.
	let progress = 0;
	r = await client.callTool({ name: "run_shell",
	    arguments: { command: "sleep 0.5" } }, undefined,
	    { onprogress: () => { progress++; } });
	check(!r.isError && progress >= 2, "progress seen: " + progress);

	// Cancellation: the SDK sends notifications/cancelled on abort.
	const ac = new AbortController();
	const pending = client.callTool({ name: "run_shell",
	    arguments: { command: "sleep 5" } }, undefined,
	    { signal: ac.signal });
	setTimeout(() => ac.abort("user stopped it"), 300);
	const t0 = Date.now();
	try {
		await pending;
		check(false, "cancelled call resolved");
	} catch (e) {
		check(Date.now() - t0 < 2000, "abort took too long");
	}
	const call = forwarded().filter((e) => e.type === "call").pop();
	let cancelled = false;
	for (let i = 0; i < 50 && !cancelled; i++) {
		cancelled = forwarded().some((e) => e.type === "cancel" &&
		    e.reqid === call.reqid);
		if (!cancelled)
			await new Promise((res) => setTimeout(res, 100));
	}
	check(cancelled, "runnerd never saw MSG_TOOL_CANCEL");
	await client.ping();

	// Logging: the trail of the client's calls, filtered by its level.
	const logs = [];
	client.setNotificationHandler(LoggingMessageNotificationSchema,
	    (n) => { logs.push(n.params); });
	check(client.getServerCapabilities().logging !== undefined,
	    "logging capability");
	await client.setLoggingLevel("warning");
	r = await client.callTool({ name: "run_shell",
	    arguments: { command: "deny" } });
	check(r.isError && logs.length === 2 && logs.every((l) =>
	    l.level === "warning") && logs[1].data.event === "tool.denied",
	    "warning trail: " + JSON.stringify(logs));
	logs.length = 0;
	await client.setLoggingLevel("error");
	await client.callTool({ name: "run_shell", arguments: {
	    command: "echo" } });
	check(logs.length === 0, "info under error: " + JSON.stringify(logs));
	try {
		await client.request({ method: "logging/setLevel",
		    params: { level: "verbose" } }, EmptyResultSchema);
		check(false, "unknown level accepted");
	} catch (e) {
		check(e instanceof McpError && e.code === -32602,
		    "unknown level: " + e);
	}

	await client.close();
	console.log(`sdk: ${passed} passed, ${failed} failed`);
	process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
	console.error("FAIL: " + (e.stack || e));
	process.exit(1);
});
