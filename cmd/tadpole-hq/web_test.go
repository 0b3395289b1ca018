package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// chromiumPath is the Debian chromium package's browser.
const chromiumPath = "/usr/bin/chromium"

// ScreenshotEnv names a file TestWebPageChromium writes a screenshot of
// the page to (docs/hq-page.png is made so).
const ScreenshotEnv = "TADPOLE_SCREENSHOT"

// pageResult is what testdata/web/page.mjs saw.
type pageResult struct {
	Errors        []string  `json:"errors"`
	Agent         string    `json:"agent"`
	Events        []int64   `json:"events"`
	Rates         []float64 `json:"rates"`
	Mode          string    `json:"mode"`
	Flame         []string  `json:"flame"`
	ServeBefore   string    `json:"serveBefore"`
	ServeAfter    string    `json:"serveAfter"`
	Matches       []string  `json:"matches"`
	Matched       string    `json:"matched"`
	ZoomWidth     float64   `json:"zoomWidth"`
	SVGWidth      float64   `json:"svgWidth"`
	UnzoomEnabled bool      `json:"unzoomEnabled"`
	Timeline      string    `json:"timeline"`
	Bubbles       []string  `json:"bubbles"`
	Exceptions    []string  `json:"exceptions"`
	Filtered      []string  `json:"filtered"`
	PausedMode    string    `json:"pausedMode"`
	Ctllog        string    `json:"ctllog"`
	PausedEvents  []int64   `json:"pausedEvents"`
	PausedRate    float64   `json:"pausedRate"`
	FrameMs       []int64   `json:"frameMs"`
	FinalLog      string    `json:"finalLog"`
}

// playwrightDir installs npm playwright-core (testdata/web/package.json)
// once into the user's cache directory and returns the directory holding
// page.mjs and node_modules.
func playwrightDir(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	pkg, err := os.ReadFile(filepath.Join("testdata", "web", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "tadpole-test", "hq-page")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil || string(old) != string(pkg) {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		npm := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts")
		if out, err := npm.CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("npm install playwright-core: %v\n%s", err, out)
			}
			t.Skipf("npm install playwright-core failed (offline?): %v\n%s", err, out)
		}
	}
	for _, name := range []string{"page.mjs", "large.mjs", "java.mjs"} {
		script, err := os.ReadFile(filepath.Join("testdata", "web", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), script, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hqWithPage starts tadpole-hq with -http and its args, both on loopback
// ports of their own; it returns the agents' address, the page's URL,
// HQ's stderr so far and a channel that gets HQ's exit.
func hqWithPage(t *testing.T, args ...string) (agentAddr, pageURL string, hqErr *lockedBuffer, hqDone chan error) {
	t.Helper()
	hqCmd := exec.Command(hqBin, append([]string{"-listen", "127.0.0.1:0", "-http", "127.0.0.1:0", "-status", "off"}, args...)...)
	stderr, _ := hqCmd.StderrPipe()
	if err := hqCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hqCmd.Process.Kill() })
	sc := bufio.NewScanner(stderr)
	for (agentAddr == "" || pageURL == "") && sc.Scan() {
		l := sc.Text()
		if a, ok := strings.CutPrefix(l, "tadpole-hq: listening on "); ok {
			agentAddr = a
		}
		if u, ok := strings.CutPrefix(l, "tadpole-hq: live page on "); ok {
			pageURL = u
		}
	}
	if agentAddr == "" || pageURL == "" {
		t.Fatal("tadpole-hq did not print its addresses")
	}
	hqErr = &lockedBuffer{}
	hqDone = make(chan error, 1)
	go func() { io.Copy(hqErr, stderr); hqDone <- hqCmd.Wait() }()
	t.Cleanup(func() {
		hqCmd.Process.Signal(syscall.SIGINT)
		select {
		case <-hqDone:
		case <-time.After(30 * time.Second):
		}
	})
	return agentAddr, pageURL, hqErr, hqDone
}

// TestWebPageChromium: tadpole-hq -http serves the page to the real
// Chromium (headless, driven by npm playwright-core under node) while the
// Go example runs against it: the page shows the agent and a growing
// event count, the flame graph has the example's methods and keeps
// growing, search and zoom work, the timeline, the exceptions with their
// bubble paths and the filtered log records show; the pause button pauses
// the run (its mode, and HQ's control log on the page and in the run's
// report), unpause and stop follow. With TADPOLE_SCREENSHOT=FILE it
// writes a screenshot of the page there.
func TestWebPageChromium(t *testing.T) {
	testpeers.RequireTools(t, "node", "npm", chromiumPath)
	dir := playwrightDir(t)
	tmp := t.TempDir()
	shop := filepath.Join(tmp, "shop")
	if out, err := exec.Command("go", "build", "-o", shop, "../../examples/go").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/go: %v\n%s", err, out)
	}
	jsonPath := filepath.Join(tmp, "runs.jsonl")
	agentAddr, pageURL, hqErr, hqDone := hqWithPage(t, "-json", jsonPath)

	// Orders enough for minutes: the page stops the run.
	app := exec.Command(shop, "-orders", "2000000000")
	app.Env = append(os.Environ(), "TADPOLE_HQ="+agentAddr)
	var appOut lockedBuffer
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Process.Kill() })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"page.mjs", pageURL, chromiumPath}
	if shot := os.Getenv(ScreenshotEnv); shot != "" {
		abs, err := filepath.Abs(shot)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abs)
	}
	node := exec.CommandContext(ctx, "node", args...)
	node.Dir = dir
	var nodeErr strings.Builder
	node.Stderr = &nodeErr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node page.mjs: %v\n%s\n%s\ntadpole-hq:\n%s", err, out, nodeErr.String(), hqErr.String())
	}
	var res pageResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("page.mjs: %v\n%s", err, out)
	}
	t.Logf("page: agent %q, events %v, rates %v, timeline %q, matched %q, frames in %v ms", res.Agent, res.Events, res.Rates,
		res.Timeline, res.Matched, res.FrameMs)

	if len(res.Errors) > 0 {
		t.Errorf("the page's errors: %q", res.Errors)
	}
	if !strings.HasPrefix(res.Agent, "127.0.0.1:") || res.Mode != "Tracing" {
		t.Errorf("agent %q mode %q", res.Agent, res.Mode)
	}
	if n := len(res.Events); n < 2 || res.Events[0] <= 0 || res.Events[n-1] <= res.Events[0] {
		t.Errorf("event counts %v: not growing", res.Events)
	}
	if slices.Max(res.Rates) <= 0 {
		t.Errorf("rates %v", res.Rates)
	}
	for _, m := range []string{"example.Shop.serve(I)V", "example.Shop.price(I)J", "example.Stock.reserve(II)Z", "example.Payments.charge(J)V"} {
		if !slices.Contains(res.Flame, m) {
			t.Errorf("flame graph lacks %s: %v", m, res.Flame)
		}
	}
	if res.ServeBefore == res.ServeAfter || !strings.Contains(res.ServeAfter, " calls") {
		t.Errorf("serve's frame did not change while the run went on: %q, then %q", res.ServeBefore, res.ServeAfter)
	}
	// One frame, or more when the page fell behind the run and its data
	// breaks left calls without their callers.
	if len(res.Matches) == 0 || slices.ContainsFunc(res.Matches, func(m string) bool { return m != "example.Payments.charge(J)V" }) ||
		!strings.HasPrefix(res.Matched, "matched: ") {
		t.Errorf("search Payments: %v %q", res.Matches, res.Matched)
	}
	if res.ZoomWidth < res.SVGWidth-1 || !res.UnzoomEnabled {
		t.Errorf("zoomed serve: width %v of %v, reset enabled %v", res.ZoomWidth, res.SVGWidth, res.UnzoomEnabled)
	}
	if len(res.FrameMs) == 0 || slices.Max(res.FrameMs) > 5000 {
		t.Errorf("the page took %v ms to give frames: not responsive", res.FrameMs)
	}
	if !strings.Contains(res.Timeline, " bars") {
		t.Errorf("timeline: %q", res.Timeline)
	}
	if !slices.Contains(res.Exceptions, "*main.PaymentRefusedError") || !slices.Contains(res.Exceptions, "*main.OutOfStockError") {
		t.Errorf("exceptions %v", res.Exceptions)
	}
	refused := false
	for _, b := range res.Bubbles {
		refused = refused || strings.HasPrefix(b, "*main.PaymentRefusedError") &&
			strings.Contains(b, "thrown in example.Payments.charge(J)V → ended example.Payments.charge(J)V → ended example.Shop.serve(I)V")
	}
	if !refused {
		t.Errorf("bubble paths %q: no refused payment thrown in charge, out of charge and serve", res.Bubbles)
	}
	if len(res.Filtered) == 0 {
		t.Error("no log record for the filter 'out of stock'")
	}
	for _, v := range res.Filtered {
		if !strings.Contains(v, "out of stock") {
			t.Errorf("filtered record %q", v)
		}
	}
	if res.PausedMode != "Paused" || !strings.Contains(res.Ctllog, "Pause@") {
		t.Errorf("after pause: mode %q, control log %q", res.PausedMode, res.Ctllog)
	}
	if len(res.PausedEvents) != 2 || res.PausedEvents[1] != res.PausedEvents[0] || res.PausedRate != 0 {
		t.Errorf("events while paused %v, rate %v: the run went on", res.PausedEvents, res.PausedRate)
	}
	if !strings.Contains(res.FinalLog, "Unpause@") || !strings.Contains(res.FinalLog, "Stop@") {
		t.Errorf("control log %q", res.FinalLog)
	}

	// The example traces no more; end it, then HQ: the run's report lists
	// the page's commands.
	app.Process.Signal(syscall.SIGKILL)
	app.Wait()
	deadline := time.Now().Add(30 * time.Second)
	var rep hq.Report
	for {
		b, _ := os.ReadFile(jsonPath)
		if len(b) > 0 {
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report of the run\ntadpole-hq:\n%s", hqErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var cmds []string
	for _, c := range rep.Commands {
		cmds = append(cmds, c.Type.String())
	}
	if want := []string{"Configuration", "Start", "Pause", "Unpause", "Stop"}; !slices.Equal(cmds, want) {
		t.Errorf("HQ's control log %v, want %v", cmds, want)
	}
	_ = hqDone
}

// javaResult is what testdata/web/java.mjs saw.
type javaResult struct {
	Errors     []string `json:"errors"`
	Agent      string   `json:"agent"`
	Events     []int64  `json:"events"`
	Mode       string   `json:"mode"`
	Flame      []string `json:"flame"`
	Bubbles    []string `json:"bubbles"`
	Exceptions []string `json:"exceptions"`
	Markers    []string `json:"markers"`
	Flameinfo  string   `json:"flameinfo"`
}

// buildJavaShop builds libtadpole.so (as ./build.sh lib links it) and
// compiles examples/java/Shop.java into dir; it returns the library and
// the class path.
func buildJavaShop(t *testing.T, dir string) (lib, classpath string) {
	t.Helper()
	root, err := testpeers.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(dir, "libtadpole.so")
	classes := filepath.Join(dir, "java")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, c := range []*exec.Cmd{
		exec.CommandContext(ctx, testpeers.GoCommand(), "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared",
			"-ldflags=-s -w -extldflags=-Wl,--version-script="+filepath.Join(root, "cmd", "libtadpole", "exports.map"),
			"-o", lib, "./cmd/libtadpole"),
		exec.CommandContext(ctx, "javac", "-nowarn", "-cp", filepath.Join(root, "jni", "classes"), "-d", classes,
			filepath.Join(root, "examples", "java", "Shop.java")),
	} {
		c.Dir = root
		c.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c.Args, err, out)
		}
	}
	return lib, classes + string(os.PathListSeparator) + filepath.Join(root, "jni", "classes")
}

// TestWebPageJavaChromium: the live page in the real Chromium while
// examples/java/Shop.java runs under java -agentpath:libtadpole.so=hq=…:
// the page shows the JVM's run with a growing event count, the flame
// graph has Shop's methods (the cashiers' calls down to the warehouse),
// the OutOfStock caught five frames up has its bubble path, and the JUL
// records show in the log records. With TADPOLE_SCREENSHOT=FILE it writes a
// screenshot of the page there (docs/hq-page.png is made so).
func TestWebPageJavaChromium(t *testing.T) {
	testpeers.RequireTools(t, "node", "npm", chromiumPath, "java", "javac", "gcc")
	dir := playwrightDir(t)
	tmp := t.TempDir()
	lib, classpath := buildJavaShop(t, tmp)
	agentAddr, pageURL, hqErr, _ := hqWithPage(t)

	// Orders enough for minutes, 5 ms apart on each cashier: the test ends
	// the JVM.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	app := exec.CommandContext(ctx, "java", "-XX:+UseSerialGC", "-agentpath:"+lib+"=hq="+agentAddr, "-cp", classpath,
		"Shop", "2000000000", "5")
	var appOut lockedBuffer
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Process.Kill(); app.Wait() })

	const serve = "Shop$Cashier.serve(I)V"
	args := []string{"java.mjs", pageURL, chromiumPath, serve}
	if shot := os.Getenv(ScreenshotEnv); shot != "" {
		abs, err := filepath.Abs(shot)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abs)
	}
	node := exec.CommandContext(ctx, "node", args...)
	node.Dir = dir
	var nodeErr strings.Builder
	node.Stderr = &nodeErr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node java.mjs: %v\n%s\n%s\ntadpole-hq:\n%s\njava:\n%s", err, out, nodeErr.String(), hqErr.String(), appOut.String())
	}
	var res javaResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("java.mjs: %v\n%s", err, out)
	}
	t.Logf("page: agent %q, events %v, %d frames, %q, exceptions %v", res.Agent, res.Events, len(res.Flame), res.Flameinfo,
		res.Exceptions)

	if len(res.Errors) > 0 {
		t.Errorf("the page's errors: %q", res.Errors)
	}
	if !strings.HasPrefix(res.Agent, "127.0.0.1:") || res.Mode != "Tracing" {
		t.Errorf("agent %q mode %q", res.Agent, res.Mode)
	}
	if n := len(res.Events); n < 2 || res.Events[0] <= 0 || res.Events[n-1] <= res.Events[0] {
		t.Errorf("event counts %v: not growing", res.Events)
	}
	if !strings.HasPrefix(res.Flameinfo, "widths by calls") {
		t.Errorf("flame graph %q: not sized by calls", res.Flameinfo)
	}
	for _, m := range []string{"Shop.work()V", "Shop$Cashier.waitForCustomer()V", serve, "Shop$Pricing.total(II)J",
		"Shop$Inventory.reserve(II)V", "Shop$Warehouse.check(I)V", "Shop$Payments.charge(IJ)V"} {
		if !slices.Contains(res.Flame, m) {
			t.Errorf("flame graph lacks %s: %v", m, res.Flame)
		}
	}
	if !slices.ContainsFunc(res.Exceptions, func(e string) bool { return strings.Contains(e, "OutOfStock") }) {
		t.Errorf("exceptions %v: no OutOfStock", res.Exceptions)
	}
	caught := false
	for _, b := range res.Bubbles {
		caught = caught || strings.Contains(b, "OutOfStock") && strings.Contains(b, "Shop$Warehouse.check(I)V") &&
			strings.Contains(b, serve)
	}
	if !caught {
		t.Errorf("bubble paths %q: no OutOfStock from the warehouse out of serve", res.Bubbles)
	}
	// The page lists a log record by its logger's name (kind "log").
	for _, k := range []string{"shop.orders", "shop.pay"} {
		if !slices.Contains(res.Markers, k) {
			t.Errorf("%d log records: none of %s (first: %.200q)", len(res.Markers), k, res.Markers)
		}
	}
}

// largeResult is what testdata/web/large.mjs saw.
type largeResult struct {
	Errors        []string `json:"errors"`
	FrameMs       []int64  `json:"frameMs"`
	Flameinfo     string   `json:"flameinfo"`
	Frames        int      `json:"frames"`
	Matched       string   `json:"matched"`
	SearchMs      int64    `json:"searchMs"`
	ZoomMs        int64    `json:"zoomMs"`
	UnzoomEnabled bool     `json:"unzoomEnabled"`
}

// TestWebPageLargeRun: the page stays responsive in Chromium on a run of
// hundreds of thousands of call paths that keeps growing (a scripted
// agent where any method calls any): it gives frames, its flame graph says
// how many paths the page was not sent (the per-page cap), search and zoom
// answer.
func TestWebPageLargeRun(t *testing.T) {
	testpeers.RequireTools(t, "node", "npm", chromiumPath)
	dir := playwrightDir(t)
	agentAddr, pageURL, hqErr, _ := hqWithPage(t)

	a, err := hqtest.Dial(agentAddr, bytefrog.Version3, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		t.Fatal(err)
	}
	data, err := a.OpenData()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	sent := make(chan error, 1)
	go func() { sent <- streamLargeRun(a, data, stop) }()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", "large.mjs", pageURL, chromiumPath)
	node.Dir = dir
	var nodeErr strings.Builder
	node.Stderr = &nodeErr
	out, err := node.Output()
	close(stop)
	if serr := <-sent; serr != nil {
		t.Errorf("agent: %v", serr)
	}
	if err != nil {
		t.Fatalf("node large.mjs: %v\n%s\n%s\ntadpole-hq:\n%s", err, out, nodeErr.String(), hqErr.String())
	}
	var res largeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("large.mjs: %v\n%s", err, out)
	}
	t.Logf("large run: %q, %d frames drawn, frames in %v ms, search %d ms, zoom %d ms", res.Flameinfo, res.Frames, res.FrameMs,
		res.SearchMs, res.ZoomMs)
	if len(res.Errors) > 0 {
		t.Errorf("the page's errors: %q", res.Errors)
	}
	if len(res.FrameMs) < 3 || slices.Max(res.FrameMs) > 5000 {
		t.Errorf("frames in %v ms: not responsive", res.FrameMs)
	}
	if !strings.Contains(res.Flameinfo, "not shown: page cap") || res.Frames == 0 {
		t.Errorf("flame graph: %q, %d frames", res.Flameinfo, res.Frames)
	}
	if !strings.HasPrefix(res.Matched, "matched: ") || !res.UnzoomEnabled || res.SearchMs > 10000 || res.ZoomMs > 10000 {
		t.Errorf("search %q in %d ms, zoom in %d ms (reset enabled %v)", res.Matched, res.SearchMs, res.ZoomMs, res.UnzoomEnabled)
	}
	if err := a.Shutdown(false); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// streamLargeRun sends calls where any of 5000 methods calls any, 10 deep
// on 8 threads, with a heartbeat every 200 ms, until stop; then it closes
// the calls still open.
func streamLargeRun(a *hqtest.Agent, data int, stop <-chan struct{}) error {
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	rng := rand.New(rand.NewPCG(1, 2))
	stacks := make([][]int32, 8)
	start := time.Now()
	beat := time.Now()
	for {
		select {
		case <-stop:
			for tid, st := range stacks {
				for i := len(st) - 1; i >= 0; i-- {
					g.Exit(uint16(tid), st[i], 1)
				}
			}
			return a.Write(data, g.Take())
		default:
		}
		for range 20000 {
			tid := rng.IntN(len(stacks))
			st := stacks[tid]
			g.RelTime = int32(time.Since(start).Milliseconds())
			if len(st) == 0 || len(st) < 10 && rng.IntN(2) == 0 {
				m := int32(rng.IntN(5000))
				g.Entry(uint16(tid), m)
				stacks[tid] = append(st, m)
			} else {
				g.Exit(uint16(tid), st[len(st)-1], 1)
				stacks[tid] = st[:len(st)-1]
			}
		}
		if err := a.Write(data, g.Take()); err != nil {
			return err
		}
		if time.Since(beat) > 200*time.Millisecond {
			beat = time.Now()
			if err := a.Heartbeat(bytefrog.ModeTracing, 0); err != nil {
				return err
			}
		}
	}
}

// TestHTTPLoopbackOnly: -http refuses an address beyond loopback unless
// -http-allow-remote is given, and -help says so.
func TestHTTPLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		_, errOut, code := hqRun(t, "-listen", "127.0.0.1:0", "-http", addr)
		if code != exitError || !strings.Contains(errOut, "refusing to serve beyond loopback") {
			t.Errorf("-http %s: status %d, %q", addr, code, errOut)
		}
	}
	_, help, code := hqRun(t, "-help")
	if code != exitOK || !strings.Contains(help, "-http-allow-remote") || !strings.Contains(help, "loopback only") {
		t.Errorf("-help: status %d\n%s", code, help)
	}
}
