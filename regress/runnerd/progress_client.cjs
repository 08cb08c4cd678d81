// SPDX-License-Identifier: ISC
// notifications/progress from the real runnerd, through mcpd, as the
// official MCP SDK client sees them: terraform's phases in order, and
// a heartbeat from a session call that runs 6 s.  For t_progress.sh.
// Usage: NODE_PATH=<dir>/node_modules node progress_client.cjs BINDIR CONF
"use strict";

const { execFileSync } = require("child_process");
const path = require("path");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");

const [bindir, conf] = process.argv.slice(2);
let failed = 0;

function check(cond, what) {
	if (!cond) {
		failed++;
		console.error("FAIL: " + what);
	}
}

function messages(seen) {
	return JSON.stringify(seen.map((p) => p.message));
}

function increasing(seen) {
	return seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress);
}

/*
 * The progress notifications as they arrive, counted at the transport:
 * the SDK hands them to onprogress a microtask later, after it has
 * dropped the handler if the result came in the same read, so that
 * onprogress alone may miss the last one.
 */
let arrived = [];

function watch(transport) {
	const inner = transport.onmessage;
	transport.onmessage = (m, extra) => {
		if (m.method === "notifications/progress")
			arrived.push(m.params);
		inner(m, extra);
	};
}

// The call's result and the progress notifications that came with it.
async function traced(client, name, args) {
	arrived = [];
	const r = await client.callTool({ name, arguments: args }, undefined,
	    { onprogress: () => {}, timeout: 240000 });
	console.log(name + ": " + JSON.stringify(arrived.map((p) => p.message)));
	return { r, seen: arrived };
}

async function main() {
	const client = new Client({ name: "progress-check", version: "1.0.0" },
	    { capabilities: {} });
	const transport = new StdioClientTransport({
		command: path.join(bindir, "mcpd"), args: ["-v", "-f", conf], stderr: "inherit",
	});
	await client.connect(transport);
	watch(transport);

	let { r, seen } = await traced(client, "terraform_plan",
	    { working_dir: "demo" });
	check(!r.isError, "terraform_plan: " + JSON.stringify(r));
	const planned = messages(["sandbox started", "terraform init",
	    "terraform plan", "rendering the plan outside the sandbox",
	    "sandbox finished"].map((message) => ({ message })));
	check(messages(seen) === planned, "terraform_plan's phases");
	check(increasing(seen), "terraform_plan's progress decreased");

	// Later calls have no init phase once the init cache holds the
	// module's lock file (launcher/tfinit.c), which it builds beside
	// the first call.
	const initless = (want) => [want, want.replace('"terraform init",',
	    "")];

	// The apply a person approved: init and apply, no plan.
	({ r, seen } = await traced(client, "terraform_apply",
	    { working_dir: "demo" }));
	check(initless(planned).includes(messages(seen)),
	    "terraform_apply's plan phases");
	const id = r.structuredContent.approval_id;
	execFileSync(path.join(bindir, "approvalctl"), ["-f", conf, "approve",
	    id], { encoding: "utf8" });
	({ r, seen } = await traced(client, "terraform_apply",
	    { working_dir: "demo", approval_id: id }));
	check(!r.isError, "terraform_apply: " + JSON.stringify(r));
	check(initless(messages(["sandbox started", "terraform init",
	    "terraform apply", "sandbox finished"].map((message) =>
	    ({ message })))).includes(messages(seen)),
	    "terraform_apply's phases");
	check(increasing(seen), "terraform_apply's progress decreased");

	({ r, seen } = await traced(client, "run_python",
	    { code: "import time\ntime.sleep(6)\nprint('slept')" }));
	check(!r.isError && r.structuredContent.stdout.includes("slept"),
	    "run_python: " + JSON.stringify(r));
	const beats = seen.filter((p) => /^running, [0-9]+ s$/.test(p.message));
	check(beats.length >= 1, "no heartbeat in 6 s");
	check(beats.length === seen.length, "a session call reports only "
	    + "heartbeats");
	check(increasing(seen), "run_python's progress decreased");

	await client.close();
	process.exit(failed ? 1 : 0);
}

main().catch((e) => {
	console.error("FAIL: " + (e.stack || e));
	process.exit(1);
});
