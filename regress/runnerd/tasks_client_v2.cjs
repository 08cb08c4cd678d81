// SPDX-License-Identifier: ISC
// The task flow through the v2 MCP client (@modelcontextprotocol/client,
// legacy mode, 2025-11-25): a terraform_apply task on working dir "d"
// approved with approvalctl while the client waits on tasks/result,
// then the plan read as a resource.  The v2 client has no task helpers:
// it sends tasks/get and tasks/result itself, with the schemas it
// ships.  For t_tasks.sh.  Usage: NODE_PATH=... node tasks_client_v2.cjs
// BINDIR CONF
"use strict";

const { execFileSync } = require("child_process");
const path = require("path");
const { Client, specTypeSchemas } = require("@modelcontextprotocol/client");
const { StdioClientTransport } =
    require("@modelcontextprotocol/client/stdio");

const [bindir, conf] = process.argv.slice(2);
const LONG = { timeout: 240000 };
let failed = 0;

function check(cond, what) {
	if (!cond) {
		failed++;
		console.error("FAIL (v2): " + what);
	}
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
	const client = new Client({ name: "tasks-check-v2", version: "1.0.0" },
	    { versionNegotiation: { mode: "legacy" } });
	const transport = new StdioClientTransport({
		command: path.join(bindir, "mcpd"), args: ["-v", "-f", conf],
		stderr: "inherit",
	});
	await client.connect(transport);
	// Every task status notification, checked against the schema.
	const notes = [];
	const inner = transport.onmessage;
	transport.onmessage = (m, extra) => {
		if (m.method === "notifications/tasks/status")
			notes.push(m);
		inner(m, extra);
	};
	check(client.getServerCapabilities().tasks !== undefined,
	    "the tasks capability");
	const created = await client.request({ method: "tools/call", params: {
	    name: "terraform_apply", arguments: { working_dir: "d" },
	    task: { ttl: 600000 } } }, specTypeSchemas.CreateTaskResult);
	const taskId = created.task.taskId;
	let t;
	for (let i = 0; i < 240; i++) {
		t = await client.request({ method: "tasks/get",
		    params: { taskId } }, specTypeSchemas.GetTaskResult);
		if (t.status !== "working")
			break;
		await sleep(500);
	}
	check(t.status === "input_required", "input_required: " +
	    JSON.stringify(t));
	const id = /approvalctl show (apr-[0-9a-f]+)/.exec(t.statusMessage)[1];
	const waiting = client.request({ method: "tasks/result",
	    params: { taskId } }, specTypeSchemas.CallToolResult, LONG);
	await sleep(1000);
	execFileSync(path.join(bindir, "approvalctl"), ["-f", conf, "approve",
	    id]);
	const r = await waiting;
	check(!r.isError && r.structuredContent.status === "applied",
	    "applied: " + JSON.stringify(r));
	t = await client.request({ method: "tasks/get", params: { taskId } },
	    specTypeSchemas.GetTaskResult);
	check(t.status === "completed", "completed: " + JSON.stringify(t));
	const list = await client.request({ method: "tasks/list", params: {} },
	    specTypeSchemas.ListTasksResult);
	check(list.tasks.length === 1 && list.tasks[0].taskId === taskId,
	    "tasks/list: " + JSON.stringify(list));
	check(JSON.stringify(notes.map((n) => n.params.status)) ===
	    '["input_required","completed"]', "status notifications: " +
	    JSON.stringify(notes));
	for (const n of notes)
		check(specTypeSchemas.TaskStatusNotification.safeParse(n)
		    .success, "a notification off the schema: " +
		    JSON.stringify(n));
	const plans = await client.listResources();
	check(plans.resources.length === 1, "the pending apply's plan: " +
	    JSON.stringify(plans));
	const read = await client.readResource({ uri: plans.resources[0].uri });
	check(read.contents.length === 2 && /terraform_data\.web/.test(
	    read.contents[0].text), "the plan read: " + JSON.stringify(read));
	await client.close();
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.error("FAIL (v2): " + (e.stack || e));
	process.exit(1);
});
