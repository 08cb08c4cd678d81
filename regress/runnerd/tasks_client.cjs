// SPDX-License-Identifier: ISC
// Tasks and plan resources (issue 20) through the official MCP SDK
// client, against the real suite: an approval-gated terraform_apply run
// as a task and approved out of band with approvalctl while the client
// waits on tasks/result (approvald stopped for a while in between), a
// denied one, a cancelled one (cancelled twice), tasks/list's pages,
// tasks/get and tasks/result for unknown tasks and another connection's,
// and plan://<digest> resources, also another connection's.  For
// t_tasks.sh.  Usage: NODE_PATH=... node tasks_client.cjs BINDIR CONF
// APPROVALD_PID; prints the request ids it saw, one a line.
"use strict";

const { execFile, execFileSync } = require("child_process");
const path = require("path");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");
const { CreateTaskResultSchema, CallToolResultSchema, McpError } =
    require("@modelcontextprotocol/sdk/types.js");

const [bindir, conf, approvaldPid] = process.argv.slice(2);
const LONG = { timeout: 240000 };
let failed = 0;

function check(cond, what) {
	if (!cond) {
		failed++;
		console.error("FAIL: " + what);
	}
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function approvalctl(...args) {
	return JSON.parse(execFileSync(path.join(bindir, "approvalctl"),
	    ["-j", "-f", conf, ...args], { encoding: "utf8" }));
}

// The operator's view: the one pending approval for working_dir.
function pendingFor(dir) {
	const list = approvalctl("list").filter((a) => a.state === "pending" &&
	    a.arguments.working_dir === dir);
	check(list.length === 1, "one pending approval for " + dir + ": " +
	    JSON.stringify(list));
	return list[0].approval_id;
}

async function connect(name) {
	const client = new Client({ name, version: "1.0.0" },
	    { capabilities: {} });
	const transport = new StdioClientTransport({
		command: path.join(bindir, "mcpd"), args: ["-v", "-f", conf],
		stderr: "inherit",
	});
	await client.connect(transport);
	return client;
}

// The JSON-RPC error code a request fails with, or "no error".
async function errorCode(p) {
	try {
		await p;
		return "no error";
	} catch (e) {
		return e instanceof McpError ? e.code : String(e);
	}
}

async function startTask(client, dir) {
	const r = await client.request({ method: "tools/call", params: {
	    name: "terraform_apply", arguments: { working_dir: dir },
	    task: { ttl: 600000 } } }, CreateTaskResultSchema);
	check(r.task.status === "working", "a new task works: " +
	    JSON.stringify(r.task));
	return r.task.taskId;
}

async function untilStatus(client, taskId, status) {
	for (let i = 0; i < 240; i++) {
		const t = await client.experimental.tasks.getTask(taskId);
		if (t.status === status)
			return t;
		check(t.status === "working", taskId + " went " + t.status);
		if (t.status !== "working")
			return t;
		await sleep(500);
	}
	check(false, taskId + " never became " + status);
}

// The SDK's own task flow: it waits on tasks/result once the task asks
// for input, and the operator approves meanwhile, after approvald was
// stopped for a while.
async function approved(client, ids) {
	const seen = [];
	let result;
	const stream = client.experimental.tasks.callToolStream(
	    { name: "terraform_apply", arguments: { working_dir: "a" } },
	    CallToolResultSchema, LONG);
	for await (const m of stream) {
		seen.push(m.type + (m.task ? ":" + m.task.status : ""));
		if (m.type === "taskStatus" && m.task.status === "input_required") {
			check(/approvalctl show apr-/.test(m.task.statusMessage),
			    "statusMessage names the approval: " +
			    m.task.statusMessage);
			const id = pendingFor("a");
			const taskId = m.task.taskId;
			setTimeout(async () => {
				process.kill(Number(approvaldPid), "SIGSTOP");
				await sleep(4000);
				// mcpd and runnerd still answer.
				const t = await client.experimental.tasks
				    .getTask(taskId);
				check(t.status === "input_required",
				    "while approvald is stopped: " + t.status);
				process.kill(Number(approvaldPid), "SIGCONT");
				execFile(path.join(bindir, "approvalctl"),
				    ["-f", conf, "approve", id], (e) =>
				    check(!e, "approvalctl approve: " + e));
			}, 1000);
		}
		if (m.type === "result")
			result = m.result;
		if (m.type === "error")
			check(false, "approved task: " + m.error);
	}
	check(JSON.stringify(seen.slice(0, 1)) === '["taskCreated:working"]' &&
	    seen.includes("taskStatus:input_required") &&
	    seen[seen.length - 1] === "result", "the stream: " +
	    JSON.stringify(seen));
	check(result && !result.isError &&
	    result.structuredContent.status === "applied",
	    "applied: " + JSON.stringify(result));
	check(result._meta["io.modelcontextprotocol/related-task"] !==
	    undefined, "the result names its task");
	ids.push(result.structuredContent.request_id);
	const tasks = await client.experimental.tasks.listTasks();
	check(tasks.tasks[0].status === "completed", "the task completed");
}

async function denied(client, ids) {
	const taskId = await startTask(client, "b");
	await untilStatus(client, taskId, "input_required");
	const id = pendingFor("b");
	const waiting = client.experimental.tasks.getTaskResult(taskId,
	    CallToolResultSchema, LONG);
	await sleep(500);
	execFileSync(path.join(bindir, "approvalctl"), ["-f", conf, "deny", id,
	    "--reason", "not today"]);
	const r = await waiting;
	check(r.isError && r.structuredContent.status === "denied" &&
	    /denied: not today/.test(r.content[0].text),
	    "denied: " + JSON.stringify(r));
	const t = await client.experimental.tasks.getTask(taskId);
	check(t.status === "failed", "a denied task failed: " + t.status);
}

async function cancelled(client) {
	const taskId = await startTask(client, "c");
	await untilStatus(client, taskId, "input_required");
	const id = pendingFor("c");
	const t = await client.experimental.tasks.cancelTask(taskId);
	check(t.status === "cancelled", "cancelled: " + JSON.stringify(t));
	check(await errorCode(client.experimental.tasks.cancelTask(taskId)) ===
	    -32602, "a second tasks/cancel is -32602");
	const r = await client.experimental.tasks.getTaskResult(taskId,
	    CallToolResultSchema);
	check(r.isError, "a cancelled task's result is an error");
	for (let i = 0; i < 50 && approvalctl("show", id).state === "pending";
	    i++)
		await sleep(100);
	const a = approvalctl("show", id);
	check(a.state === "denied" && /withdrawn/.test(a.reason),
	    "the approval was withdrawn: " + JSON.stringify(a));
}

// A plan as a resource; returns its URI.
async function plan(client) {
	const r = await client.callTool({ name: "terraform_plan",
	    arguments: { working_dir: "a" } }, undefined, LONG);
	check(!r.isError, "terraform_plan: " + JSON.stringify(r));
	const link = r.content.find((c) => c.type === "resource_link");
	check(link && link.uri === "plan://" + r.structuredContent.plan_digest,
	    "the plan's resource_link: " + JSON.stringify(r.content));
	const list = await client.listResources();
	check(list.resources.some((x) => x.uri === link.uri),
	    "resources/list has the plan");
	const read = await client.readResource({ uri: link.uri });
	const text = read.contents.find((c) => c.mimeType === "text/plain");
	const json = read.contents.find((c) => c.mimeType ===
	    "application/json");
	check(text && /terraform_data\.web/.test(text.text),
	    "the plan text: " + JSON.stringify(text));
	check(json && JSON.parse(json.text).resource_changes.length > 0,
	    "the plan JSON");
	return link.uri;
}

async function main() {
	const client = await connect("tasks-check");
	const caps = client.getServerCapabilities();
	check(caps.tasks && caps.tasks.requests.tools.call && caps.resources,
	    "capabilities: " + JSON.stringify(caps));
	const tools = await client.listTools();
	check(tools.tools.find((t) => t.name === "terraform_apply").execution
	    .taskSupport === "optional", "terraform_apply's taskSupport");

	const uri = await plan(client);
	const ids = [];
	await approved(client, ids);
	await denied(client, ids);
	await cancelled(client);
	// Two more, low tier: tasks that run straight through.
	for (const n of [1, 2]) {
		const r = await client.request({ method: "tools/call", params: {
		    name: "terraform_plan", arguments: { working_dir: "a" },
		    task: {} } }, CreateTaskResultSchema);
		const res = await client.experimental.tasks.getTaskResult(
		    r.task.taskId, CallToolResultSchema, LONG);
		check(!res.isError && res.content.some((c) => c.type ===
		    "resource_link"), "a plan as a task " + n);
	}
	const page1 = await client.experimental.tasks.listTasks();
	check(page1.tasks.length === 4 && page1.nextCursor,
	    "tasks/list's first page: " + JSON.stringify(page1));
	const page2 = await client.experimental.tasks.listTasks(
	    page1.nextCursor);
	check(page2.tasks.length === 1 && !page2.nextCursor,
	    "tasks/list's second page: " + JSON.stringify(page2));
	check(await errorCode(client.experimental.tasks.listTasks("nope")) ===
	    -32602, "an unknown cursor");
	check(await errorCode(client.experimental.tasks.getTask(
	    "task-00000000000000000000000000000000")) === -32602,
	    "tasks/get for an unknown task");
	check(await errorCode(client.experimental.tasks.getTaskResult(
	    "task-00000000000000000000000000000000")) === -32602,
	    "tasks/result for an unknown task");

	// Another connection sees none of it.
	const other = await connect("tasks-other");
	const mine = page1.tasks[0].taskId;
	check(await errorCode(other.experimental.tasks.getTask(mine)) ===
	    -32602, "tasks/get for another connection's task");
	check(await errorCode(other.experimental.tasks.getTaskResult(mine)) ===
	    -32602, "tasks/result for another connection's task");
	check(await errorCode(other.experimental.tasks.cancelTask(mine)) ===
	    -32602, "tasks/cancel for another connection's task");
	check((await other.experimental.tasks.listTasks()).tasks.length === 0,
	    "tasks/list shows another connection nothing");
	check(await errorCode(other.readResource({ uri })) === -32002,
	    "resources/read of another client's plan");
	check(await errorCode(client.readResource({ uri: "plan://" +
	    "0".repeat(64) })) === -32002, "a plan that does not exist");
	check(await errorCode(client.readResource({ uri:
	    "file:///etc/passwd" })) === -32002, "a URI that is no plan");
	check((await other.listResources()).resources.length === 0,
	    "resources/list shows another client nothing");
	await other.close();
	await client.close();
	console.log(ids.join("\n"));
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.error("FAIL: " + (e.stack || e));
	process.exit(1);
});
