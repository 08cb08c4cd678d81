// SPDX-License-Identifier: ISC
// mcpd driven by the v2 MCP client (@modelcontextprotocol/client) in
// each of its negotiation modes (legacy, auto, pinned 2026-07-28),
// against fake_runnerd.py; then mcpd's raw lines for what the SDK never
// sends (batches, bad levels, unreadable ids) checked against the SDK's
// spec types (isSpecType).  For t_sdk.sh.
// Usage: NODE_PATH=<dir>/node_modules node sdk_v2_client.cjs MCPD CONF
"use strict";

const { spawn } = require("child_process");
const { Client, isSpecType } = require("@modelcontextprotocol/client");
const { StdioClientTransport } =
    require("@modelcontextprotocol/client/stdio");

const [mcpd, conf] = process.argv.slice(2);
const LEVELS = ["debug", "info", "notice", "warning", "error", "critical",
    "alert", "emergency"];
const MODERN = "2026-07-28";
let passed = 0, failed = 0;

function check(cond, what) {
	if (cond) {
		passed++;
	} else {
		failed++;
		console.error("FAIL: " + what);
	}
}

async function connect(mode) {
	const transport = new StdioClientTransport({
		command: mcpd, args: ["-v", "-f", conf], stderr: "inherit",
	});
	const client = new Client({ name: "sdk-v2-check", version: "1.0.0" },
	    { capabilities: {}, versionNegotiation: { mode } });
	const messages = [];
	client.setNotificationHandler("notifications/message",
	    (n) => { messages.push(n.params); });
	await client.connect(transport);
	return { client, messages };
}

// The code of the error a promise rejects with, or "resolved".
async function errorCode(p) {
	try {
		await p;
		return "resolved";
	} catch (e) {
		return e.code;
	}
}

function shell(command, meta) {
	const params = { name: "run_shell", arguments: { command } };
	if (meta !== undefined)
		params._meta = meta;
	return params;
}

async function legacy() {
	const { client, messages } = await connect("legacy");
	check(client.getProtocolEra() === "legacy", "legacy era");
	check(client.getServerVersion().name === "agent-sandbox-mcpd",
	    "legacy serverInfo");
	check(client.getServerCapabilities().logging !== undefined,
	    "logging capability");
	await client.callTool(shell("echo"));
	check(messages.length === 0, "log messages before setLevel");
	// Each level: what the calls log is filtered by it.
	for (const level of LEVELS) {
		await client.setLoggingLevel(level);
		for (const [cmd, floor] of [["echo", "info"],
		    ["deny", "warning"], ["fail", "error"]]) {
			messages.length = 0;
			await client.callTool(shell(cmd));
			const min = LEVELS.indexOf(level);
			check(messages.every((m) =>
			    LEVELS.indexOf(m.level) >= min &&
			    m.logger === "agent-sandbox" &&
			    m.data.request_id.startsWith("req-")),
			    `${level} ${cmd}: ${JSON.stringify(messages)}`);
			check(min > LEVELS.indexOf(floor) ||
			    messages.some((m) => m.level === floor),
			    `${level} ${cmd}: no ${floor} message`);
		}
	}
	check(await errorCode(client.request({ method: "logging/setLevel",
	    params: { level: "verbose" } })) === -32602, "unknown level");
	await client.close();
}

async function modern(mode) {
	const { client, messages } = await connect(mode);
	const what = JSON.stringify(mode);
	check(client.getProtocolEra() === "modern", what + ": era");
	const info = client.getServerVersion();
	check(info !== undefined && info.name === "agent-sandbox-mcpd" &&
	    typeof info.version === "string",
	    what + ": getServerVersion() " + JSON.stringify(info));
	check(client.getServerCapabilities().logging !== undefined,
	    what + ": logging capability");
	let r = await client.callTool(shell("echo"));
	check(!r.isError && messages.length === 0,
	    what + ": log messages without logLevel");
	r = await client.callTool(shell("fail",
	    { "io.modelcontextprotocol/logLevel": "warning" }));
	check(r.isError && messages.length === 1 &&
	    messages[0].level === "error" &&
	    messages[0].data.event === "tool.result",
	    what + ": at warning " + JSON.stringify(messages));
	messages.length = 0;
	await client.callTool(shell("echo",
	    { "io.modelcontextprotocol/logLevel": "debug" }));
	check(messages.length === 6 && messages[0].data.event ===
	    "tool.request", what + ": at debug " + JSON.stringify(messages));
	check(await errorCode(client.callTool(shell("echo",
	    { "io.modelcontextprotocol/logLevel": "loud" }))) === -32602,
	    what + ": unknown logLevel");
	await client.close();
}

// mcpd on raw stdio: send(lines) gives the lines it answers within ms.
function raw() {
	const p = spawn(mcpd, ["-v", "-f", conf],
	    { stdio: ["pipe", "pipe", "inherit"] });
	let buf = "";
	const lines = [];
	p.stdout.on("data", (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf("\n")) !== -1) {
			lines.push(JSON.parse(buf.slice(0, i)));
			buf = buf.slice(i + 1);
		}
	});
	return {
		async send(msgs, ms) {
			lines.length = 0;
			for (const m of msgs)
				p.stdin.write((typeof m === "string" ? m :
				    JSON.stringify(m)) + "\n");
			await new Promise((res) => setTimeout(res, ms));
			return lines.splice(0);
		},
		close() { p.stdin.end(); },
	};
}

function initialize(id, version) {
	return { jsonrpc: "2.0", id, method: "initialize", params: {
	    protocolVersion: version, capabilities: {},
	    clientInfo: { name: "raw", version: "1" } } };
}

const ping = (id) => ({ jsonrpc: "2.0", id, method: "ping" });
const note = { jsonrpc: "2.0", method: "notifications/initialized" };

async function rawChecks() {
	// 2025-03-26: batches answered, each member a JSON-RPC response.
	let m = raw();
	await m.send([initialize(1, "2025-03-26"), note], 300);
	let out = await m.send([[ping(2), note, { jsonrpc: "2.0", id: 3,
	    method: "logging/setLevel", params: { level: "loud" } },
	    { jsonrpc: "2.0", id: 4, method: "tools/call", params:
	    shell("echo") }]], 1500);
	const batch = out[0];
	check(out.length === 1 && Array.isArray(batch) && batch.length === 3 &&
	    batch.every((r) => isSpecType.JSONRPCResponse(r)),
	    "2025-03-26 batch: " + JSON.stringify(out));
	check(batch.find((r) => r.id === 3).error.code === -32602,
	    "unknown level in a batch");
	check((await m.send([[note]], 300)).length === 0,
	    "a batch of notifications answered");
	// The revision's schema requires an id: JSON-RPC's null, then.
	out = await m.send(["[]"], 300);
	check(out.length === 1 && out[0].error.code === -32600 &&
	    out[0].id === null, "empty batch: " + JSON.stringify(out));
	m.close();
	// 2025-11-25: refused, and an unreadable id is left out.
	m = raw();
	await m.send([initialize(1, "2025-11-25"), note], 300);
	out = await m.send([[ping(2)], "{]"], 300);
	check(out.length === 2 && out.every((r) =>
	    isSpecType.JSONRPCErrorResponse(r) && !("id" in r)) &&
	    out[0].error.code === -32600 && out[1].error.code === -32700,
	    "2025-11-25 refusals: " + JSON.stringify(out));
	await m.send([{ jsonrpc: "2.0", id: 5, method: "logging/setLevel",
	    params: { level: "info" } }], 300);
	out = await m.send([{ jsonrpc: "2.0", id: 6, method: "tools/call",
	    params: shell("deny") }], 1500);
	const logs = out.filter((x) => x.method === "notifications/message");
	check(logs.length === 3 && logs.every((n) =>
	    isSpecType.LoggingMessageNotification(n)),
	    "notifications/message: " + JSON.stringify(out));
	m.close();
	// 2026-07-28: serverInfo in every result's _meta; no initialize.
	m = raw();
	const meta = { "io.modelcontextprotocol/protocolVersion": MODERN,
	    "io.modelcontextprotocol/clientCapabilities": {} };
	out = await m.send([{ jsonrpc: "2.0", id: 1, method: "server/discover",
	    params: { _meta: meta } }, { jsonrpc: "2.0", id: 2,
	    method: "initialize", params: Object.assign({ _meta: meta },
	    initialize(2, MODERN).params) }], 300);
	check(out[0].result._meta["io.modelcontextprotocol/serverInfo"].name ===
	    "agent-sandbox-mcpd" && isSpecType.DiscoverResult(out[0].result),
	    "discover: " + JSON.stringify(out[0]));
	check(out[1].error.code === -32601 &&
	    isSpecType.JSONRPCErrorResponse(out[1]),
	    "modern initialize: " + JSON.stringify(out[1]));
	m.close();
}

async function main() {
	await legacy();
	await modern("auto");
	await modern({ pin: MODERN });
	await rawChecks();
	console.log(`sdk v2: ${passed} passed, ${failed} failed`);
	process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
	console.error("FAIL: " + (e.stack || e));
	process.exit(1);
});
