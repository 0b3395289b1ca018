package jtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// The management endpoint in a JVM: testdata/J4PApp.java registers app
// MBeans in the platform MBean server; the agent serves them and the
// JVM's own (java.lang:*) beside tadpole's. With the Jolokia reference
// agent (testdata/JolokiaAgent.java over Debian's jolokia-core 1.7.1) the
// same JVM serves both endpoints.

// Debian's Jolokia core and its JSON library (libjolokia-core-java).
var jolokiaJars = []string{"/usr/share/java/jolokia-core.jar", "/usr/share/java/json-simple.jar"}

// requireJolokia skips (fails under CI=true) without the Jolokia jars.
func requireJolokia(t testing.TB) {
	t.Helper()
	for _, j := range jolokiaJars {
		if _, err := os.Stat(j); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true (apt-get install libjolokia-core-java): %v", j, err)
			}
			t.Skipf("%s not found (apt-get install libjolokia-core-java): %v", j, err)
		}
	}
}

// j4pBuilt is the compiled J4PApp and, with the jars, the Jolokia agent jar.
var j4pBuilt struct {
	sync.Once
	dir, agentJar string
	err           error
}

func buildJ4P(t testing.TB, e *Env) (classes, agentJar string) {
	t.Helper()
	j4pBuilt.Do(func() {
		dir := filepath.Join(e.Dir, "j4p")
		run := func(name string, args ...string) error {
			c := exec.Command(name, args...)
			c.Dir = dir
			if out, err := c.CombinedOutput(); err != nil {
				return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
			}
			return nil
		}
		if j4pBuilt.err = os.MkdirAll(filepath.Join(dir, "agent"), 0o755); j4pBuilt.err != nil {
			return
		}
		if j4pBuilt.err = run("javac", "-nowarn", "-d", "app", filepath.Join(e.Root, "jni/jtest/testdata/J4PApp.java")); j4pBuilt.err != nil {
			return
		}
		j4pBuilt.dir = dir
		for _, j := range jolokiaJars {
			if _, err := os.Stat(j); err != nil {
				return // no reference agent; tests needing it skip
			}
		}
		if j4pBuilt.err = run("javac", "-nowarn", "-cp", strings.Join(jolokiaJars, ":"), "-d", "agent",
			filepath.Join(e.Root, "jni/jtest/testdata/JolokiaAgent.java")); j4pBuilt.err != nil {
			return
		}
		if j4pBuilt.err = os.WriteFile(filepath.Join(dir, "manifest.txt"), []byte("Premain-Class: JolokiaAgent\n"), 0o644); j4pBuilt.err != nil {
			return
		}
		if j4pBuilt.err = run("jar", "cfm", "jolokia-agent.jar", "manifest.txt", "-C", "agent", "."); j4pBuilt.err != nil {
			return
		}
		j4pBuilt.agentJar = filepath.Join(dir, "jolokia-agent.jar")
	})
	if j4pBuilt.err != nil {
		t.Fatal(j4pBuilt.err)
	}
	return filepath.Join(j4pBuilt.dir, "app"), j4pBuilt.agentJar
}

// j4pJVM is a running J4PApp.
type j4pJVM struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  bytes.Buffer
	Tadpole string // base URL of tadpole's endpoint
	Jolokia string // base URL of the reference agent's, or ""
	// JolokiaPool is the reference agent's second port, served by a fixed
	// pool of jolokiaPool threads, or "".
	JolokiaPool string
}

// j4pOptions configure startJ4P.
type j4pOptions struct {
	jolokia        bool     // also load the reference agent
	jolokiaThreads int      // its executor's threads (1: single, its default)
	jolokiaPool    int      // > 0: a second port with a fixed pool of that many threads
	env            []string // extra environment (TADPOLE_*)
	checkJNI       bool     // -Xcheck:jni
	args           []string // J4PApp's arguments
}

// startJ4P starts J4PApp with the agent's endpoint on a free port (write
// and exec enabled unless env says otherwise, no HQ) and waits until it
// and the reference agent answer.
func startJ4P(t testing.TB, o j4pOptions) *j4pJVM {
	t.Helper()
	e := Build(t)
	if o.jolokia {
		requireJolokia(t)
	}
	classes, agentJar := buildJ4P(t, e)
	addr := testpeers.FreeAddr(t)
	args := []string{"-XX:+UseSerialGC", "-Duser.timezone=UTC", "-agentpath:" + e.Lib}
	if o.checkJNI {
		args = append([]string{"-Xcheck:jni"}, args...)
	}
	cp := classes
	if o.jolokia {
		th := o.jolokiaThreads
		if th < 1 {
			th = 1
		}
		// TCP_NODELAY on the JDK's HTTP server: without it, its separate
		// writes of headers and body wait for the client's delayed ACK
		// (40 ms) on keep-alive connections.
		args = append(args, "-Dsun.net.httpserver.nodelay=true",
			fmt.Sprintf("-javaagent:%s=port=0,threads=%d,pool=%d", agentJar, th, o.jolokiaPool))
		cp += ":" + strings.Join(jolokiaJars, ":")
	}
	args = append(append(args, "-cp", cp, "J4PApp"), o.args...)
	cmd := exec.Command("java", args...)
	cmd.Env = append(os.Environ(), "TADPOLE_J4P="+addr, "TADPOLE_J4P_WRITE=on", "TADPOLE_HQ=", "TADPOLE_LOG=none")
	cmd.Env = append(cmd.Env, o.env...)
	j := &j4pJVM{cmd: cmd, Tadpole: "http://" + addr + "/jolokia"}
	var err error
	if j.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	jport := make(chan string, 1)
	jpool := make(chan string, 1)
	var mu sync.Mutex
	go func() {
		s := bufio.NewScanner(errPipe)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			line := s.Text()
			if p, ok := strings.CutPrefix(line, "jolokia "); ok {
				jport <- p
			}
			if p, ok := strings.CutPrefix(line, "jolokia-pool "); ok {
				jpool <- p
			}
			mu.Lock()
			j.stderr.WriteString(line + "\n")
			mu.Unlock()
		}
	}()
	ready := make(chan struct{})
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if s.Text() == "J4PApp ready" {
				close(ready)
			}
		}
		close(exited)
	}()
	t.Cleanup(func() {
		j.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		mu.Lock()
		defer mu.Unlock()
		if s := j.stderr.String(); o.checkJNI && strings.Contains(s, "in native method") {
			t.Errorf("-Xcheck:jni reports:\n%s", s)
		}
	})
	stderr := func() string {
		mu.Lock()
		defer mu.Unlock()
		return j.stderr.String()
	}
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("J4PApp ended before it was ready:\n%s", stderr())
	case <-time.After(RunTimeout):
		t.Fatalf("J4PApp not ready:\n%s", stderr())
	}
	if o.jolokia {
		select {
		case p := <-jport:
			j.Jolokia = "http://127.0.0.1:" + p + "/jolokia"
		case <-time.After(RunTimeout):
			t.Fatalf("the Jolokia agent did not start:\n%s", stderr())
		}
		if o.jolokiaPool > 0 {
			select {
			case p := <-jpool:
				j.JolokiaPool = "http://127.0.0.1:" + p + "/jolokia"
			case <-time.After(RunTimeout):
				t.Fatalf("the Jolokia agent's pool did not start:\n%s", stderr())
			}
		}
	}
	// The endpoint starts with the agent; wait until it serves the JVM's beans.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := j4pGet(j.Tadpole + "/read/java.lang:type=Runtime/VmName")
		if err == nil && r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tadpole's endpoint does not serve java.lang:type=Runtime: %+v %v\n%s", r, err, stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return j
}

// j4pResp is a response, the value raw.
type j4pResp struct {
	Status    int             `json:"status"`
	Value     json.RawMessage `json:"value"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
	Request   map[string]any  `json:"request"`
}

var j4pClient = &http.Client{Timeout: 30 * time.Second}

func j4pGet(url string) (*j4pResp, error) {
	r, err := j4pClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	var out j4pResp
	if err := json.NewDecoder(r.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("GET %s: HTTP %d: %v", url, r.StatusCode, err)
	}
	return &out, nil
}

func j4pPost(url, body string) ([]byte, error) {
	r, err := j4pClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err == nil && r.StatusCode != 200 {
		err = fmt.Errorf("POST %s: HTTP %d: %s", url, r.StatusCode, b)
	}
	return b, err
}

// value decodes a response value, failing the test on an error status.
func (r *j4pResp) value(t *testing.T, what string) any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: status %d, %s: %s", what, r.Status, r.ErrorType, r.Error)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(r.Value))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func mustGet(t *testing.T, url string) *j4pResp {
	t.Helper()
	r, err := j4pGet(url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJ4PPlatform: in a JVM (under -Xcheck:jni), the endpoint serves the
// platform MBean server: java.lang beans with Jolokia's conversions
// (CompositeData, TabularData, arrays, ObjectName), pattern reads, the
// app's own MBeans (standard and MXBean), write, exec with simple and
// composite arguments, search, list, bulk and errors; tadpole's own beans
// stay served beside them.
func TestJ4PPlatform(t *testing.T) {
	j := startJ4P(t, j4pOptions{checkJNI: true})
	base := j.Tadpole

	heap := mustGet(t, base+"/read/java.lang:type=Memory/HeapMemoryUsage").value(t, "HeapMemoryUsage")
	m, ok := heap.(map[string]any)
	if !ok || len(m) != 4 {
		t.Fatalf("HeapMemoryUsage = %v; want {init, used, committed, max}", heap)
	}
	for _, k := range []string{"init", "used", "committed", "max"} {
		if _, ok := m[k].(json.Number); !ok {
			t.Errorf("HeapMemoryUsage.%s = %v; want a number", k, m[k])
		}
	}
	if v := mustGet(t, base+"/read/java.lang:type=Memory/HeapMemoryUsage/max").value(t, "max"); v != m["max"] {
		t.Errorf("HeapMemoryUsage/max = %v; want %v", v, m["max"])
	}
	if v := mustGet(t, base+"/read/java.lang:type=Runtime/SystemProperties/java.class.path").value(t, "TabularData path"); !strings.Contains(fmt.Sprint(v), "app") {
		t.Errorf("SystemProperties/java.class.path = %v", v)
	}
	if v := mustGet(t, base+"/read/java.lang:type=Memory/ObjectName").value(t, "ObjectName"); fmt.Sprint(v) != "map[objectName:java.lang:type=Memory]" {
		t.Errorf("ObjectName = %v", v)
	}
	gcs := mustGet(t, base+"/read/java.lang:type=GarbageCollector,*/CollectionCount").value(t, "pattern read")
	if g, ok := gcs.(map[string]any); !ok || len(g) == 0 {
		t.Errorf("GarbageCollector pattern read = %v", gcs)
	}
	if v := mustGet(t, base+"/read/java.lang:type=Threading/ThreadCount").value(t, "ThreadCount"); v == nil {
		t.Error("ThreadCount nil")
	}
	if v := mustGet(t, base+"/read/app:type=Stats/Path/1/x").value(t, "MXBean array path"); v != json.Number("3") {
		t.Errorf("Stats/Path/1/x = %v; want 3", v)
	}
	if v := mustGet(t, base+"/read/app:type=Stats/Counters/hits").value(t, "MXBean map"); v != json.Number("40") {
		t.Errorf("Stats/Counters/hits = %v; want 40", v)
	}
	shop := mustGet(t, base+"/read/app:type=Shop,name=main").value(t, "all attributes")
	want := `map[Count:3 Name:main Opened:2023-11-14T22:13:20Z Owner:map[objectName:app:name=bob,type=Owner] Prices:[3 5 8] Ratio:0.25 Stock:map[apples:7 pears:2] ` +
		`Table:map[north:map[apples:map[item:apples qty:4 region:north] pears:map[item:pears qty:1 region:north]] south:map[apples:map[item:apples qty:9 region:south]]] ` +
		`Tags:[fresh local]]`
	if fmt.Sprint(shop) != want {
		t.Errorf("Shop = %v; want %s", shop, want)
	}

	// write and exec
	if v := mustGet(t, base+"/write/app:type=Shop,name=main/Count/9").value(t, "write"); v != json.Number("3") {
		t.Errorf("write Count: old value %v; want 3", v)
	}
	if v := mustGet(t, base+"/read/app:type=Shop,name=main/Count").value(t, "read back"); v != json.Number("9") {
		t.Errorf("Count after write = %v; want 9", v)
	}
	if v := mustGet(t, base+"/write/java.lang:type=Memory/Verbose/true").value(t, "write Verbose"); v != false {
		t.Errorf("write Verbose: old %v", v)
	}
	mustGet(t, base+"/write/java.lang:type=Memory/Verbose/false").value(t, "write Verbose back")
	if v := mustGet(t, base+"/exec/java.lang:type=Memory/gc").value(t, "exec gc"); v != nil {
		t.Errorf("gc = %v; want null", v)
	}
	if v := mustGet(t, base+"/exec/app:type=Shop,name=main/price/abcd/3").value(t, "exec price"); v != json.Number("12") {
		t.Errorf("price = %v; want 12", v)
	}
	if v := mustGet(t, base+"/exec/app:type=Shop,name=main/echo(java.lang.String,int)/ab/3").value(t, "exec overload"); v != "ababab" {
		t.Errorf("echo = %v; want ababab", v)
	}
	if v := mustGet(t, base+"/exec/app:type=Shop,name=main/echo/ab").value(t, "exec overload by count"); v != "ab" {
		t.Errorf("echo = %v; want ab", v)
	}
	b, err := j4pPost(base, `{"type":"exec","mbean":"app:type=Stats","operation":"move","arguments":[{"x":1,"y":2},5]}`)
	if err != nil || !strings.Contains(string(b), `"value":{"x":6,"y":2}`) {
		t.Errorf("exec with a CompositeData argument: %s %v", b, err)
	}
	b, err = j4pPost(base, `{"type":"write","mbean":"app:type=Stats","attribute":"Origin","value":{"x":7,"y":8}}`)
	if err != nil || !strings.Contains(string(b), `"value":{"x":1,"y":2}`) {
		t.Errorf("write of a CompositeData: %s %v", b, err)
	}
	if v := mustGet(t, base+"/read/app:type=Stats/Origin/y").value(t, "composite written"); v != json.Number("8") {
		t.Errorf("Origin/y after write = %v; want 8", v)
	}

	// The calls run on the endpoint's own daemon threads: an exec that
	// returns an array of CompositeData (ThreadInfo[]) lists them.
	threads := mustGet(t, base+"/exec/java.lang:type=Threading/dumpAllThreads/false/false").value(t, "dumpAllThreads")
	found := false
	ts, _ := threads.([]any)
	for _, ti := range ts {
		m, _ := ti.(map[string]any)
		if name, _ := m["threadName"].(string); strings.HasPrefix(name, "tadpole-j4p-") {
			found = true
			if m["daemon"] != true {
				t.Errorf("%s is not a daemon thread: %v", name, m)
			}
		}
	}
	if len(ts) == 0 || !found {
		t.Errorf("dumpAllThreads: no tadpole-j4p-<n> thread among %d", len(ts))
	}

	// search, list, errors, tadpole's beans
	names := mustGet(t, base+"/search/java.lang:type=Memory,*").value(t, "search")
	if ns, _ := names.([]any); len(ns) != 1 || ns[0] != "java.lang:type=Memory" {
		t.Errorf("search = %v", names)
	}
	all := mustGet(t, base+"/search/*:*").value(t, "search all")
	for _, n := range []string{"java.lang:type=Runtime", "app:type=Stats", "io.tadpole:type=Agent", "JMImplementation:type=MBeanServerDelegate"} {
		if !strings.Contains(fmt.Sprint(all), n) {
			t.Errorf("search *:* lacks %s: %v", n, all)
		}
	}
	l := mustGet(t, base+"/list/java.lang/type=Memory").value(t, "list")
	lm, _ := l.(map[string]any)
	if lm == nil || fmt.Sprint(lm["class"]) != "sun.management.MemoryImpl" || !strings.Contains(fmt.Sprint(lm["op"]), "gc:map[args:[] desc:gc ret:void]") ||
		!strings.Contains(fmt.Sprint(lm["attr"]), "Verbose:map[desc:Verbose rw:true type:boolean]") {
		t.Errorf("list java.lang/type=Memory = %v", l)
	}
	if r := mustGet(t, base+"/read/java.lang:type=Memory/Nope"); r.Status != 404 || r.ErrorType != "javax.management.AttributeNotFoundException" {
		t.Errorf("unknown attribute: %+v", r)
	}
	if r := mustGet(t, base+"/read/nope:type=X/Y"); r.Status != 404 || r.ErrorType != "javax.management.InstanceNotFoundException" {
		t.Errorf("unknown MBean: %+v", r)
	}
	if r := mustGet(t, base+"/write/app:type=Shop,name=main/Count/many"); r.Status != 400 {
		t.Errorf("bad value: %+v", r)
	}
	if v := mustGet(t, base+"/read/io.tadpole:type=Agent/LogPolicy").value(t, "tadpole's bean"); v == "" {
		t.Error("io.tadpole:type=Agent/LogPolicy empty")
	}
	b, err = j4pPost(base, `[{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"max"},`+
		`{"type":"search","mbean":"app:type=Stats,*"},{"type":"read","mbean":"app:type=Shop,name=main","attribute":"Tags"}]`)
	var bulk []j4pResp
	if err == nil {
		err = json.Unmarshal(b, &bulk)
	}
	if err != nil || len(bulk) != 3 || string(bulk[0].Value) != string(m["max"].(json.Number)) || string(bulk[1].Value) != `["app:type=Stats"]` ||
		string(bulk[2].Value) != `["fresh","local"]` {
		t.Errorf("bulk: %s %v", b, err)
	}
}

// TestJ4PPlatformStuckMBean: an MBean operation that does not return for
// longer than the endpoint waits (5 s) fails its request with a 500 error
// in time, the other requests go on meanwhile, and the JVM still exits
// when the application ends (the worker it holds is a daemon thread).
func TestJ4PPlatformStuckMBean(t *testing.T) {
	j := startJ4P(t, j4pOptions{})
	done := make(chan *j4pResp, 1)
	t0 := time.Now()
	go func() {
		r, err := j4pGet(j.Tadpole + "/exec/app:type=Shop,name=main/sleep/600000")
		if err != nil {
			r = &j4pResp{Error: err.Error()}
		}
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	for range 5 {
		if v := mustGet(t, j.Tadpole+"/read/java.lang:type=Memory/HeapMemoryUsage/max").value(t, "read beside a stuck call"); v == nil {
			t.Fatal("no value")
		}
	}
	select {
	case r := <-done:
		if r.Status != 500 || !strings.Contains(r.Error, "no answer within") {
			t.Errorf("stuck exec: %+v; want a 500 error", r)
		}
		if d := time.Since(t0); d > 20*time.Second {
			t.Errorf("stuck exec answered after %v", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stuck exec: no answer in 30 s")
	}
	j.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- j.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("J4PApp: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("the JVM did not exit with a worker stuck in an MBean")
	}
}

// TestJ4PPlatformPolicy: without j4p_write, writes and execs on the JVM's
// beans are refused (JSON 403) and nothing changes; reads go on.
func TestJ4PPlatformPolicy(t *testing.T) {
	j := startJ4P(t, j4pOptions{env: []string{"TADPOLE_J4P_WRITE=off"}})
	if r := mustGet(t, j.Tadpole+"/write/app:type=Shop,name=main/Count/9"); r.Status != 403 {
		t.Errorf("write without j4p_write: %+v; want 403", r)
	}
	if r := mustGet(t, j.Tadpole+"/exec/app:type=Shop,name=main/reset"); r.Status != 403 {
		t.Errorf("exec without j4p_write: %+v; want 403", r)
	}
	if v := mustGet(t, j.Tadpole+"/read/app:type=Shop,name=main/Count").value(t, "read"); v != json.Number("3") {
		t.Errorf("Count = %v; want 3 (unchanged)", v)
	}
}
