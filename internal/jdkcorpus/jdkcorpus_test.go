package jdkcorpus

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCorpus(t *testing.T) {
	dir := Require(t)
	list, err := Classes()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "java.base", "java", "lang", "Object.class")
	found, modInfo := false, 0
	for _, p := range list {
		found = found || p == want
		if filepath.Base(p) == "module-info.class" {
			modInfo++
		}
	}
	if !found {
		t.Errorf("%s not in the corpus", want)
	}
	if modInfo == 0 {
		t.Error("no module-info.class in the corpus")
	}
	sample, err := Sample(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(sample) != 10 {
		t.Fatalf("Sample(10) gave %d classes", len(sample))
	}
	for i, b := range sample {
		if !bytes.HasPrefix(b, []byte{0xCA, 0xFE, 0xBA, 0xBE}) {
			t.Errorf("sample %d is not a class file", i)
		}
	}
	// A second extraction reuses the cache directory.
	again, err := extract()
	if err != nil || again != dir {
		t.Errorf("extract() = %s, %v; want the cached %s", again, err, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error(err)
	}
	t.Logf("%d classes (%d modules) in %s", len(list), modInfo, dir)
}
