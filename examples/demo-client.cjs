// SPDX-License-Identifier: ISC
// The forces-replacement scenario, told by an MCP client standing in for
// the agent (the official TypeScript SDK: Client + StdioClientTransport)
// and by the operator's approvalctl.  Every step is also checked: the
// script exits 1 at the first one that does not behave as it must, so
// the same file is `make demo` and an integration test.
//
// usage: NODE_PATH=<build>/node/node_modules node demo-client.cjs \
//            BINDIR CONFIG TERRAFORM_ROOT
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");

const [bindir, conf, tfroot] = process.argv.slice(2);
if (!bindir || !conf || !tfroot) {
	console.error("usage: demo-client.cjs BINDIR CONFIG TERRAFORM_ROOT");
	process.exit(2);
}
const labels = path.join(tfroot, "demo", "labels.auto.tfvars");
const bold = process.stdout.isTTY ? (s) => "\x1b[1m" + s + "\x1b[0m" :
    (s) => s;

function say(who, what) {
	console.log("\n" + bold("[" + who + "] " + what));
}

function show(text) {
	console.log(text.replace(/\n+$/, "").split("\n")
	    .map((l) => "    " + l).join("\n"));
}

function must(cond, what) {
	if (!cond) {
		console.error("\ndemo: FAILED: " + what);
		process.exit(1);
	}
}

function ctl(tool, ...args) {
	return execFileSync(path.join(bindir, tool), ["-f", conf, ...args],
	    { encoding: "utf8" });
}

function text(r) {
	return r.content.map((c) => c.text).join("\n");
}

async function call(client, name, args) {
	const r = await client.callTool({ name, arguments: args });
	return { r, sc: r.structuredContent || {}, text: text(r) };
}

// Creates the live "web" Deployment the story starts from, through the
// same gate: plan, approval, apply.
async function setScene(client) {
	say("setup", "deploying the live \"web\" Deployment (approved by the operator)");
	const pending = await call(client, "terraform_apply",
	    { working_dir: "demo" });
	must(pending.sc.status === "pending_approval", "setup: " + pending.text);
	ctl("approvalctl", "approve", pending.sc.approval_id);
	const applied = await call(client, "terraform_apply",
	    { working_dir: "demo", approval_id: pending.sc.approval_id });
	must(!applied.r.isError && applied.sc.status === "applied",
	    "setup apply: " + applied.text);
	console.log("    web is running (3 replicas, selector app=web)");
}

async function main() {
	const transport = new StdioClientTransport({
		command: path.join(bindir, "mcpd"), args: ["-f", conf],
		stderr: "ignore",
	});
	const client = new Client({ name: "agent-sandbox-demo",
	    version: "1.0.0" }, { capabilities: {} });
	await client.connect(transport);
	console.log(bold("agent-sandbox demo: a routine-looking change that " +
	    "would replace a live Deployment"));
	await setScene(client);

	say("agent", "terraform_plan(working_dir=\"demo\")");
	let plan = await call(client, "terraform_plan", { working_dir: "demo" });
	must(!plan.r.isError, "first plan: " + plan.text);
	show(plan.sc.summary);
	must(plan.sc.add + plan.sc.change + plan.sc.destroy +
	    plan.sc.replace === 0, "the live state has drifted");
	console.log("    no changes: the Deployment matches the code");

	say("agent", "tidies a label in labels.auto.tfvars: app = \"web\" -> \"web-frontend\"");
	const before = fs.readFileSync(labels, "utf8");
	must(before.includes('app  = "web"'), "labels.auto.tfvars has app = \"web\"");
	fs.writeFileSync(labels, before.replace('app  = "web"',
	    'app  = "web-frontend"'));

	say("agent", "terraform_plan(working_dir=\"demo\")");
	plan = await call(client, "terraform_plan", { working_dir: "demo" });
	must(!plan.r.isError, "second plan: " + plan.text);
	show(plan.sc.summary);
	must(plan.sc.replace === 1 && plan.sc.destructive === true,
	    "the replacement is flagged destructive");
	const web = plan.sc.changes.find((c) => c.address ===
	    "terraform_data.web");
	must(web && web.forced_by.includes("triggers_replace"),
	    "the plan names what forces the replacement");
	console.log("    one line forces the Deployment's replacement: " +
	    "its pods would go away");

	say("agent", "terraform_apply(working_dir=\"demo\")");
	const pending = await call(client, "terraform_apply",
	    { working_dir: "demo" });
	must(!pending.r.isError && pending.sc.status === "pending_approval",
	    "apply without approval stops: " + pending.text);
	must(pending.sc.destructive === true, "the approval shows it destructive");
	show(pending.text);
	const id = pending.sc.approval_id;

	say("agent", "terraform_plan(working_dir=\"demo\") while it waits");
	plan = await call(client, "terraform_plan", { working_dir: "demo" });
	must(!plan.r.isError && plan.sc.replace === 1,
	    "the apply without approval changed nothing");
	console.log("    still 1 to replace: nothing was applied");

	say("operator", "approvalctl show " + id);
	const shown = ctl("approvalctl", "show", id);
	must(shown.includes("terraform_data.web") && shown.includes("DESTRUCTIVE"),
	    "approvalctl show marks the replacement");
	show(shown.split("\n").slice(0, 15).join("\n"));
	say("operator", "approvalctl approve " + id);
	show(ctl("approvalctl", "approve", id));

	say("agent", "terraform_apply(working_dir=\"demo\", approval_id=\"" +
	    id + "\")");
	const applied = await call(client, "terraform_apply",
	    { working_dir: "demo", approval_id: id });
	must(!applied.r.isError && applied.sc.status === "applied",
	    "the approved apply: " + applied.text);
	must(applied.sc.plan_digest === pending.sc.plan_digest,
	    "exactly the approved plan was applied");
	show(applied.text);

	say("agent", "replays the same approval");
	const replay = await call(client, "terraform_apply",
	    { working_dir: "demo", approval_id: id });
	must(replay.r.isError && /already spent/.test(replay.text),
	    "the replay is refused: " + replay.text);
	show(replay.text);

	say("agent", "terraform_plan(working_dir=\"demo\")");
	plan = await call(client, "terraform_plan", { working_dir: "demo" });
	must(!plan.r.isError && plan.sc.add + plan.sc.change +
	    plan.sc.destroy + plan.sc.replace === 0,
	    "after the apply nothing is left to change");
	show(plan.sc.summary);

	say("operator", "auditctl show --request-id " +
	    pending.sc.request_id + "   (the request that asked)");
	show(ctl("auditctl", "show", "--request-id", pending.sc.request_id));
	const rid = applied.sc.request_id;
	say("operator", "auditctl show --request-id " + rid +
	    "   (the apply that spent it)");
	const trail = ctl("auditctl", "show", "--request-id", rid);
	show(trail);
	const events = ctl("auditctl", "-j", "show", "--request-id", rid)
	    .split("\n").filter((l) => l.trim() !== "")
	    .map((l) => JSON.parse(l).event);
	const want = ["tool.request", "guardrail.decision", "approval.spent",
	    "credential.issued", "sandbox.started", "sandbox.completed",
	    "tool.result"];
	must(JSON.stringify(events) === JSON.stringify(want),
	    "the audit trail is " + events.join(" -> "));
	must(execFileSync(path.join(bindir, "auditctl"), ["-f", conf,
	    "verify"], { encoding: "utf8" }).length > 0, "auditctl verify");

	await client.close();
	console.log("\n" + bold("demo: the gate held: the destructive change " +
	    "ran only after a person approved exactly that plan, once."));
}

main().catch((e) => {
	console.error("demo: " + (e && e.stack ? e.stack : e));
	process.exit(1);
});
