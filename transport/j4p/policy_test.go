package j4p

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
)

func loadTestPolicy(t testing.TB) *Policy {
	t.Helper()
	f, err := os.Open("testdata/jolokia-access.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePolicy(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicyParse(t *testing.T) {
	p := loadTestPolicy(t)
	hosts := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"10.0.3.4", true}, {"10.1.0.1", false}, {"192.168.1.77", true}, {"192.168.2.1", false}, {"::1", false},
	}
	for _, h := range hosts {
		if got := p.AllowHost(net.ParseIP(h.ip), nil); got != h.want {
			t.Errorf("AllowHost(%s) = %v; want %v", h.ip, got, h.want)
		}
	}
	if !p.AllowMethod("GET") || p.AllowMethod("PUT") {
		t.Error("methods")
	}
	if !p.AllowType(TypeRead) || p.AllowType(TypeSearch) {
		t.Error("commands")
	}
	checks := []struct {
		general bool
		t       Type
		name    string
		member  string
		want    bool
	}{
		// Not allowed in general: only <allow> entries permit.
		{false, TypeWrite, "java.lang:type=Memory", "Verbose", true},
		{false, TypeExec, "java.lang:type=Memory", "gc", true},
		{false, TypeExec, "java.lang:type=Memory", "dump", false},
		{false, TypeRead, "java.lang:type=Memory", "HeapMemoryUsage", false},
		{false, TypeRead, "test:type=Calc,name=a", "Counter", true},
		{false, TypeWrite, "test:type=Calc,name=a", "Counter", false}, // mode="read"
		// Allowed in general: only <deny> entries refuse.
		{true, TypeRead, "java.lang:type=Memory", "HeapMemoryUsage", true},
		{true, TypeRead, "test:type=Calc,name=a", "Counter", false},
		{true, TypeRead, "test:type=Calc,name=a", "Names", false},
		{true, TypeExec, "test:type=Calc,name=a", "add", false},
		{true, TypeExec, "other:type=X", "add", true},
	}
	for _, c := range checks {
		if got := p.Allowed(c.general, c.t, MustObjectName(c.name), c.member); got != c.want {
			t.Errorf("Allowed(%v, %v, %s, %s) = %v; want %v", c.general, c.t, c.name, c.member, got, c.want)
		}
	}
	var none *Policy
	if !none.Allowed(true, TypeRead, MustObjectName("a:b=c"), "X") || none.Allowed(false, TypeWrite, MustObjectName("a:b=c"), "X") {
		t.Error("nil policy")
	}
	if !p.AllowOrigin("http://www.example.com") || p.AllowOrigin("http://evil.org") || !p.StrictOrigin {
		t.Error("cors")
	}
}

func TestPolicyBad(t *testing.T) {
	for _, doc := range []string{
		`<other/>`,
		`<restrict><commands><command>fly</command></commands></restrict>`,
		`<restrict><allow><mbean><name>nocolon</name></mbean></allow></restrict>`,
		`<restrict><remote><host>1.2.3.4/xx</host></remote></restrict>`,
		`<restrict>`,
		strings.Repeat(" ", maxPolicyBytes+1),
	} {
		if _, err := ParsePolicy(strings.NewReader(doc)); !errors.Is(err, ErrBadPolicy) {
			t.Errorf("ParsePolicy(%.40q) err = %v; want ErrBadPolicy", doc, err)
		}
	}
	// j4p 0.30's file: <j4p-restrict> with <mbeans> as the allow list.
	p, err := ParsePolicy(strings.NewReader(`<j4p-restrict><commands><command>read</command></commands><mbeans><mbean><name>java.lang:type=Memory</name><operation>gc</operation></mbean></mbeans></j4p-restrict>`))
	if err != nil || !p.Allowed(false, TypeExec, MustObjectName("java.lang:type=Memory"), "gc") {
		t.Errorf("0.30 policy: %v", err)
	}
}

func TestPolicyDenials(t *testing.T) {
	pol := loadTestPolicy(t)
	h, b := newTestHandler(t, func(c *Config) { c.Policy = pol })
	const ex = "/jolokia/"
	runCases(t, h, []respCase{
		{name: "write allowed by policy", target: ex + "write/java.lang:type=Memory/Verbose/true", httpCode: 200, status: 200, value: `false`},
		{name: "exec allowed by policy", target: ex + "exec/java.lang:type=Memory/gc", httpCode: 200, status: 200},
		{name: "read default", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage/used", httpCode: 200, status: 200},
		{name: "deny beats allow for a command allowed in general", target: ex + "read/test:type=Calc,name=a/Counter", httpCode: 200, status: 403},
		{name: "read denied", target: ex + "read/test:type=Calc,name=a/Names", httpCode: 200, status: 403, errType: "java.lang.SecurityException"},
		{name: "read all skips denied", target: ex + "read/test:type=Calc,name=b", httpCode: 200, status: 200, value: `{}`},
		{name: "write mode=read", target: ex + "write/test:type=Calc,name=a/Counter/5", httpCode: 200, status: 403},
		{name: "exec denied", target: ex + "exec/test:type=Calc,name=a/add/1/2", httpCode: 200, status: 403},
		{name: "command not listed", target: ex + "search/*:*", httpCode: 200, status: 403},
		{name: "http method", method: "DELETE", target: ex + "version", httpCode: 403},
	})
	if !b.verbose || b.gcs != 1 {
		t.Errorf("allowed write/exec did not run: verbose %v gcs %d", b.verbose, b.gcs)
	}
	// A policy <deny> beats AllowWrite; AllowWrite opens what no entry names.
	h, _ = newTestHandler(t, func(c *Config) { c.Policy = pol; c.AllowWrite = true })
	runCases(t, h, []respCase{
		{name: "deny beats enable", target: ex + "write/test:type=Calc,name=a/Conf/x", httpCode: 200, status: 403},
	})
	// ActiveMQ's style: only reads in general, exec granted per MBean.
	amq, err := ParsePolicy(strings.NewReader(`<restrict><commands><command>read</command><command>list</command></commands>
		<allow><mbean><name>java.lang:*</name><attribute>*</attribute><operation>*</operation></mbean></allow></restrict>`))
	if err != nil {
		t.Fatal(err)
	}
	h, _ = newTestHandler(t, func(c *Config) { c.Policy = amq })
	runCases(t, h, []respCase{
		{name: "exec granted by allow", target: ex + "exec/java.lang:type=Memory/gc", httpCode: 200, status: 200},
		{name: "write granted by allow", target: ex + "write/java.lang:type=Memory/Verbose/true", httpCode: 200, status: 200},
		{name: "exec elsewhere", target: ex + "exec/test:type=Calc,name=a/add/1/2", httpCode: 200, status: 403},
		{name: "read elsewhere", target: ex + "read/test:type=Calc,name=b/Counter", httpCode: 200, status: 200},
		{name: "version not listed", target: ex + "version", httpCode: 200, status: 403},
	})
	// Hosts: the policy's, not loopback-only.
	r := do(h, "GET", ex+"version", "")
	if r.Code != 200 {
		t.Errorf("loopback in policy: HTTP %d", r.Code)
	}
}
