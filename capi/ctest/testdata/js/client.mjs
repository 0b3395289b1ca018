// The official Jolokia client (npm jolokia.js 2.6.1) against tadpole's
// management endpoint in a C program (testdata/modes.c, tracing into a
// test HQ): node client.mjs <url>. tadpole's own MBeans: version, read
// (one, several and all attributes, patterns), write (refused: read-only),
// exec, search, list with paths and bulk. Prints one line per check and
// "N passed, N failed"; exits non-zero on any failure.
import { readFileSync } from "node:fs";

globalThis.window = globalThis; // the client calls window.btoa
const { default: Jolokia } = await import("jolokia.js");

const [url] = process.argv.slice(2);
const j = new Jolokia({ url });
let passed = 0, failed = 0;

function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log("ok   " + name);
  } else {
    failed++;
    console.log("FAIL " + name + ": " + JSON.stringify(detail));
  }
}

async function step(name, f) {
  try {
    await f();
  } catch (e) {
    failed++;
    console.log("FAIL " + name + ": threw " + (e instanceof Response ? "HTTP " + e.status : e));
  }
}

const pkg = JSON.parse(readFileSync(new URL("./node_modules/jolokia.js/package.json", import.meta.url)));
check("client is jolokia.js 2.6.1", pkg.version === "2.6.1", pkg.version);

const get = { method: "get" };
const AGENT = "io.tadpole:type=Agent";
const LOGGER = "io.tadpole:type=Logger,name=ctest.modes";

await step("version", async () => {
  const r = await j.request({ type: "version" });
  check("version POST", r.status === 200 && r.value.protocol === "7.2" && typeof r.value.agent === "string", r);
  const g = await j.request({ type: "version" }, get);
  check("version GET", g.status === 200 && g.value.agent === r.value.agent, g);
});

await step("read", async () => {
  let r = await j.request({ type: "read", mbean: AGENT, attribute: "Mode" }, get);
  check("read GET", r.status === 200 && r.value === "Tracing", r);
  r = await j.request({ type: "read", mbean: AGENT, attribute: ["Connected", "LogPolicy"] });
  check("read POST several attributes", r.status === 200 && r.value.Connected === true && typeof r.value.LogPolicy === "string", r);
  r = await j.request({ type: "read", mbean: AGENT });
  check("read all attributes", r.status === 200 && r.value.Mode === "Tracing" && typeof r.value.Events === "number", r);
  r = await j.request({ type: "read", mbean: "io.tadpole:type=Logger,*", attribute: "Name" }, get);
  check("read pattern", r.status === 200 && r.value[LOGGER].Name === "ctest.modes", r);
  r = await j.request({ type: "read", mbean: LOGGER, attribute: "Name", path: "x" }, get);
  check("read path into a string: 404", r.status === 404, r);
  r = await j.request({ type: "read", mbean: AGENT, attribute: "Nope" });
  check("read error in HTTP 200", r.status === 404 && r.error_type === "javax.management.AttributeNotFoundException", r);
});

await step("write", async () => {
  const r = await j.request({ type: "write", mbean: AGENT, attribute: "Mode", value: "Paused" }, get);
  check("write of a read-only attribute refused", r.status === 400, r);
});

await step("exec", async () => {
  let r = await j.request({ type: "exec", mbean: LOGGER, operation: "disable" }, get);
  check("exec GET void", r.status === 200 && r.value === null, r);
  r = await j.request({ type: "read", mbean: LOGGER, attribute: "Override" });
  check("exec took effect", r.value === "off", r);
  await j.request({ type: "exec", mbean: LOGGER, operation: "reset" });
  r = await j.request({ type: "read", mbean: LOGGER, attribute: "Override" }, get);
  check("exec POST", r.value === "none", r);
  r = await j.request({ type: "exec", mbean: AGENT, operation: "mark", arguments: ["k", "v/with!escapes"] }, get);
  check("exec GET with arguments", r.status === 200, r);
  r = await j.request({ type: "exec", mbean: AGENT, operation: "flush" });
  check("exec with a result", r.status === 200 && typeof r.value === "boolean", r);
});

await step("search", async () => {
  let r = await j.request({ type: "search", mbean: "io.tadpole:*" }, get);
  check("search GET", r.status === 200 && r.value.includes(AGENT) && r.value.includes(LOGGER), r);
  r = await j.request({ type: "search", mbean: "java.lang:*" });
  check("search without match", r.status === 200 && r.value.length === 0, r);
});

await step("list", async () => {
  let r = await j.request({ type: "list", path: "io.tadpole/type=Agent/op" }, get);
  check("list GET with path", r.status === 200 && r.value.mark.args.length === 2 && r.value.flush.ret === "boolean", r);
  r = await j.request({ type: "list", path: "io.tadpole" });
  check("list POST domain", r.status === 200 && "type=Agent" in r.value && "type=Logger,name=ctest.modes" in r.value, r);
});

await step("bulk", async () => {
  const rs = await j.request([
    { type: "read", mbean: AGENT, attribute: "Mode" },
    { type: "search", mbean: "io.tadpole:type=Logger,*" },
    { type: "version" },
    { type: "read", mbean: "nope:type=X", attribute: "Y" },
  ]);
  check("bulk answers in order", Array.isArray(rs) && rs.length === 4 && rs[0].value === "Tracing" &&
    rs[1].value.includes(LOGGER) && rs[2].value.protocol === "7.2" && rs[3].status === 404, rs);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
