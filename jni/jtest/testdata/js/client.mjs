// The official Jolokia client (npm jolokia.js 2.6.1) against tadpole's
// management endpoint in a JVM running J4PApp: node client.mjs <url>.
// The JVM's platform MBeans, the app's MBeans (standard and MXBean) and
// tadpole's own: version, read with paths, write, exec, search, list and
// bulk. Prints one line per check and "N passed, N failed"; exits non-zero
// on any failure.
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
const post = { method: "post" }; // the client would write an object into a GET path as "[object Object]"
const MEM = "java.lang:type=Memory";
const RT = "java.lang:type=Runtime";
const SHOP = "app:type=Shop,name=main";
const STATS = "app:type=Stats";
const AGENT = "io.tadpole:type=Agent";

await step("version", async () => {
  const r = await j.request({ type: "version" });
  check("version POST", r.status === 200 && r.value.protocol === "7.2", r);
  const g = await j.request({ type: "version" }, get);
  check("version GET", g.status === 200 && g.value.agent === r.value.agent, g);
});

await step("read", async () => {
  let r = await j.request({ type: "read", mbean: MEM, attribute: "HeapMemoryUsage" }, get);
  const heap = r.value;
  check("read CompositeData", r.status === 200 && ["init", "used", "committed", "max"].every((k) => typeof heap[k] === "number"), r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "HeapMemoryUsage", path: "max" });
  check("read POST with path", r.status === 200 && r.value === heap.max, r);
  r = await j.request({ type: "read", mbean: RT, attribute: "SystemProperties", path: "java.vm.name" }, get);
  check("read TabularData with path", r.status === 200 && typeof r.value === "string" && r.value.length > 0, r);
  r = await j.request({ type: "read", mbean: "java.lang:type=GarbageCollector,*", attribute: "CollectionCount" }, get);
  check("read pattern", r.status === 200 && Object.keys(r.value).length > 0 &&
    Object.values(r.value).every((v) => typeof v.CollectionCount === "number"), r);
  r = await j.request({ type: "read", mbean: STATS, attribute: "Path", path: "1/x" }, get);
  check("read MXBean array path", r.status === 200 && r.value === 3, r);
  r = await j.request({ type: "read", mbean: SHOP, attribute: "Owner" });
  check("read ObjectName", r.status === 200 && r.value.objectName === "app:name=bob,type=Owner", r);
  r = await j.request({ type: "read", mbean: STATS, attribute: "Path" }, { maxDepth: 1 });
  check("read maxDepth", r.status === 200 && typeof r.value[0] === "string" && r.value[0].startsWith("[Depth limit"), r);
  r = await j.request({ type: "read", mbean: AGENT, attribute: "LogPolicy" }, get);
  check("read tadpole's bean", r.status === 200 && typeof r.value === "string", r);
  r = await j.request({ type: "read", mbean: MEM, attribute: "Nope" });
  check("read error in HTTP 200", r.status === 404 && r.error_type === "javax.management.AttributeNotFoundException", r);
});

await step("write", async () => {
  let r = await j.request({ type: "write", mbean: MEM, attribute: "Verbose", value: true }, get);
  check("write GET returns old value", r.status === 200 && r.value === false, r);
  r = await j.request({ type: "write", mbean: MEM, attribute: "Verbose", value: false });
  check("write POST returns old value", r.status === 200 && r.value === true, r);
  r = await j.request({ type: "write", mbean: STATS, attribute: "Origin", value: { x: 5, y: 6 } }, post);
  check("write CompositeData", r.status === 200 && r.value.x === 1, r);
  r = await j.request({ type: "read", mbean: STATS, attribute: "Origin", path: "x" }, get);
  check("write took effect", r.value === 5, r);
});

await step("exec", async () => {
  let r = await j.request({ type: "exec", mbean: MEM, operation: "gc" }, get);
  check("exec GET void", r.status === 200 && r.value === null, r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "price", arguments: ["abc", 4] }, get);
  check("exec GET with arguments", r.status === 200 && r.value === 12, r);
  r = await j.request({ type: "exec", mbean: SHOP, operation: "echo(java.lang.String,int)", arguments: ["a/b!", 2] });
  check("exec POST with signature and escapes", r.status === 200 && r.value === "a/b!a/b!", r);
  r = await j.request({ type: "exec", mbean: STATS, operation: "move", arguments: [{ x: 1, y: 2 }, 5] }, post);
  check("exec CompositeData argument", r.status === 200 && r.value.x === 6 && r.value.y === 2, r);
  r = await j.request({ type: "exec", mbean: "java.lang:type=Threading", operation: "getThreadCpuTime(long)", arguments: [1] }, get);
  check("exec platform operation", r.status === 200 && typeof r.value === "number", r);
});

await step("search", async () => {
  let r = await j.request({ type: "search", mbean: "*:type=Memory,*" }, get);
  check("search GET", r.status === 200 && JSON.stringify(r.value) === JSON.stringify([MEM]), r);
  r = await j.request({ type: "search", mbean: "app:*" });
  check("search POST", r.status === 200 && r.value.includes(SHOP) && r.value.includes(STATS), r);
  r = await j.request({ type: "search", mbean: "nope:*" });
  check("search without match", r.status === 200 && r.value.length === 0, r);
});

await step("list", async () => {
  let r = await j.request({ type: "list", path: "java.lang/type=Memory" }, get);
  check("list GET with path", r.status === 200 && r.value.attr.Verbose.rw === true && r.value.op.gc.ret === "void", r);
  r = await j.request({ type: "list", path: "app/name=main,type=Shop/op" });
  check("list overloaded operation", r.status === 200 && Array.isArray(r.value.echo) && r.value.echo.length === 2, r);
  r = await j.request({ type: "list" }, { maxDepth: 1 });
  check("list maxDepth", r.status === 200 && r.value["java.lang"] === 1 && r.value["io.tadpole"] === 1 && r.value.app === 1, r);
});

await step("bulk", async () => {
  const rs = await j.request([
    { type: "read", mbean: MEM, attribute: "HeapMemoryUsage", path: "max" },
    { type: "search", mbean: "app:type=Stats,*" },
    { type: "version" },
    { type: "read", mbean: "nope:type=X", attribute: "Y" },
    { type: "exec", mbean: SHOP, operation: "price", arguments: ["ab", 3] },
  ]);
  check("bulk answers in order", Array.isArray(rs) && rs.length === 5 && typeof rs[0].value === "number" &&
    rs[1].value[0] === STATS && rs[2].value.protocol === "7.2" && rs[3].status === 404 && rs[4].value === 6, rs);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
