package jni

import "testing"

func TestSplitProbeOptions(t *testing.T) {
	rest, p, err := splitProbeOptions("hq=127.0.0.1:1,trace=com/acme/**,!com/acme/gen/**, com.other.*,log=none", "x/**")
	if err != nil || rest != "hq=127.0.0.1:1,log=none" {
		t.Fatalf("rest %q, err %v", rest, err)
	}
	for _, c := range []struct {
		name string
		boot bool
		want bool
	}{
		{"com/acme/A", false, true},
		{"com/acme/deep/B$1", false, true},
		{"com/acme/gen/G", false, false},
		{"com/other/C", false, true},
		{"com/other/sub/C", false, false},
		{"x/Y", false, false}, // the option wins over TADPOLE_TRACE
		{"io/tadpole/Probe", false, false},
		{"java/lang/Object", true, false},
	} {
		if got := p.wants(c.name, c.boot); got != c.want {
			t.Errorf("wants(%s) = %v; want %v", c.name, got, c.want)
		}
	}
	_, p, _ = splitProbeOptions("hq=a:1", "x/**")
	if !p.wants("x/Y", false) || p.wants("z/Z", false) {
		t.Error("TADPOLE_TRACE not applied")
	}
	_, p, _ = splitProbeOptions("", "")
	for name, want := range map[string]bool{"com/acme/A": true, "Main": true, "java/util/List": false, "jdk/internal/X": false, "sun/misc/Y": false} {
		if got := p.wants(name, false); got != want {
			t.Errorf("default wants(%s) = %v; want %v", name, got, want)
		}
	}
	if p.wants("com/acme/A", true) {
		t.Error("default: a bootstrap class is traced")
	}
	if _, p, _ = splitProbeOptions("trace=none", ""); !p.off || p.wants("com/acme/A", false) {
		t.Error("trace=none does not turn tracing off")
	}
	if _, p, err := splitProbeOptions("trace=a/[b]+", ""); err != nil || !p.wants("a/[b]+", false) || p.wants("a/b", false) {
		t.Errorf("glob with regex characters: err %v; they must match themselves", err)
	}
	julOrder.Store(false)
	if rest, _, _ := splitProbeOptions("jul_order=on,hq=a:1", ""); rest != "hq=a:1" || !julOrder.Load() {
		t.Errorf("jul_order=on: rest %q, on %v", rest, julOrder.Load())
	}
	julOrder.Store(false)
}
