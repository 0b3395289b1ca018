// The official Jolokia client (npm jolokia.js 2.6.1) against tadpole's
// management endpoint: node client.mjs <url> [<user> <password>]. Prints
// one line per check and "N passed, N failed"; exits non-zero on any
// failure.
import { readFileSync } from "node:fs";

globalThis.window = globalThis; // the client calls window.btoa
const { default: Jolokia } = await import("jolokia.js");

const [url, username, password] = process.argv.slice(2);
const j = new Jolokia(username ? { url, username, password } : { url });
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

if (username) {
  await step("basic auth", async () => {
    const anon = new Jolokia({ url });
    const status = await anon.request({ type: "version" }).then(() => 200, (e) => e instanceof Response ? e.status : String(e));
    check("no credentials: HTTP 401", status === 401, status);
    const wrong = new Jolokia({ url, username, password: password + "x" });
    const status2 = await wrong.request({ type: "version" }, { method: "get" }).then(() => 200, (e) => e instanceof Response ? e.status : String(e));
    check("wrong password: HTTP 401", status2 === 401, status2);
  });
}

const get = { method: "get" };
const MEM = "java.lang:type=Memory";
const SHOP = "app:type=Shop,name=main";
const AGENT = "io.tadpole:type=Agent";
const LOGGER = "io.tadpole:type=Logger,name=app.orders";

await step("version", async () => {
  const r = await j.request({ type: "version" });
  check("version POST", r.status === 200 && r.value.protocol === "7.2" && typeof r.value.agent === "string", r);
  const g = await j.request({ type: "version" }, get);
  check("version GET", g.status === 200 && g.value.agent === r.value.agent, g);
});

await step("read", async () => {
  let r = await j.request({ type: "read", mbean: MEM, attribute: "HeapMemoryUsage", path: "used" }, get);
  check("read GET with path", r.status === 200 && r.value === 15348352, r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "HeapMemoryUsage" });
  check("read POST", r.status === 200 && r.value.max === 532742144 && r.request.mbean === MEM, r);
  r = await j.request({ type: "read", mbean: SHOP, attribute: "Stock", path: "apples/1" }, get);
  check("read GET with deep path", r.status === 200 && r.value === 5, r);
  r = await j.request({ type: "read", mbean: SHOP, attribute: "Stock", path: "pears/ripe" });
  check("read POST with deep path", r.status === 200 && r.value === true, r);
  r = await j.request({ type: "read", mbean: SHOP, attribute: "Stock" }, { maxDepth: 1 });
  check("read maxDepth as query parameter", r.status === 200 && typeof r.value.apples === "string" && r.value.apples.startsWith("[Depth limit"), r);
  r = await j.request({ type: "read", mbean: AGENT, attribute: "Mode" }, get);
  check("read tadpole agent", r.status === 200 && r.value === "Off", r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "Nope" });
  check("read error in HTTP 200", r.status === 404 && r.error_type === "javax.management.AttributeNotFoundException" && !("stacktrace" in r), r);
  check("isError", Jolokia.isError(r), r);
});

await step("write", async () => {
  let r = await j.request({ type: "write", mbean: MEM, attribute: "Verbose", value: true }, get);
  check("write GET returns old value", r.status === 200 && r.value === false, r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "Verbose" });
  check("write took effect", r.value === true, r);
  r = await j.request({ type: "write", mbean: MEM, attribute: "Verbose", value: false });
  check("write POST returns old value", r.status === 200 && r.value === true, r);
});

await step("exec", async () => {
  let r = await j.request({ type: "exec", mbean: MEM, operation: "gc" }, get);
  check("exec GET void", r.status === 200 && r.value === null, r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "GCCount" });
  check("exec took effect", r.value === 1, r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "price", arguments: ["abc", 4] }, get);
  check("exec GET with arguments", r.status === 200 && r.value === 12, r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "price(java.lang.String,int)", arguments: ["abcd", 2] });
  check("exec POST with signature", r.status === 200 && r.value === 8, r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "echo", arguments: ["a/b!c\"d"] }, get);
  check("exec GET escapes", r.status === 200 && r.value === "a/b!c\"d", r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "echo", arguments: [null] }, get);
  check("exec GET null", r.status === 200 && r.value === "null", r);
  r = await j.request({ type: "exec", mbean: LOGGER, operation: "disable" }, get);
  r = await j.request({ type: "read", mbean: LOGGER, attribute: "Enabled" }, get);
  check("exec tadpole logger disable", r.status === 200 && r.value === false, r);
  await j.request({ type: "exec", mbean: LOGGER, operation: "enable" });
  r = await j.request({ type: "read", mbean: LOGGER, attribute: "Override" });
  check("exec tadpole logger enable", r.value === "on", r);
  r = await j.request({ type: "exec", mbean: AGENT, operation: "mark", arguments: ["k", "v"] });
  check("exec tadpole mark", r.status === 200, r);
});

await step("search", async () => {
  let r = await j.request({ type: "search", mbean: "*:type=Memory,*" }, get);
  check("search GET", r.status === 200 && JSON.stringify(r.value) === JSON.stringify([MEM]), r);
  r = await j.request({ type: "search", mbean: "io.tadpole:*" });
  check("search POST", r.status === 200 && r.value.includes(AGENT) && r.value.includes(LOGGER), r);
  r = await j.request({ type: "search", mbean: "nope:*" });
  check("search without match", r.status === 200 && Array.isArray(r.value) && r.value.length === 0, r);
});

await step("list", async () => {
  let r = await j.request({ type: "list", path: "java.lang/type=Memory" }, get);
  check("list GET with path", r.status === 200 && r.value.attr.Verbose.rw === true && r.value.op.gc.ret === "void", r);
  r = await j.request({ type: "list", path: "io.tadpole/type=Agent/op" });
  check("list POST tadpole ops", r.status === 200 && "mark" in r.value && "flush" in r.value, r);
  r = await j.request({ type: "list" }, { maxDepth: 1 });
  check("list maxDepth", r.status === 200 && r.value["io.tadpole"] === 1 && r.value["java.lang"] === 1, r);
});

await step("bulk", async () => {
  const rs = await j.request([
    { type: "read", mbean: MEM, attribute: "HeapMemoryUsage", path: "committed" },
    { type: "search", mbean: "app:*" },
    { type: "version" },
    { type: "read", mbean: "nope:type=X", attribute: "Y" },
    { type: "exec", mbean: SHOP, operation: "price", arguments: ["ab", 3] },
  ]);
  check("bulk answers in order", Array.isArray(rs) && rs.length === 5 &&
    rs[0].value === 18292736 && rs[1].value[0] === SHOP && rs[2].value.protocol === "7.2" &&
    rs[3].status === 404 && rs[4].value === 6, rs);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
