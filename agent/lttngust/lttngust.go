//go:build cgo

package lttngust

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LT_ABI 2

typedef int (*lt_enabled_fn)(int domain);
typedef void (*lt_jul_fn)(const char *, size_t, const char *, size_t, const char *, size_t, const char *, size_t, long,
                          int, int);
typedef void (*lt_log4j_fn)(const char *, const char *, const char *, const char *, const char *, int, long, int,
                            const char *);
typedef void (*lt_python_fn)(const char *, const char *, const char *, const char *, int, int, int, const char *);

static lt_enabled_fn lt_enabled;
static lt_jul_fn lt_jul_p;
static lt_log4j_fn lt_log4j_p;
static lt_python_fn lt_python_p;

// lt_open loads the companion; once, before any other call.
static int lt_open(const char *path, char *err, size_t errlen) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e != NULL ? e : path);
		return -1;
	}
	int (*abi)(void) = (int (*)(void))dlsym(h, "tadpole_lttng_abi");
	lt_enabled = (lt_enabled_fn)dlsym(h, "tadpole_lttng_enabled");
	lt_jul_p = (lt_jul_fn)dlsym(h, "tadpole_lttng_jul_n");
	lt_log4j_p = (lt_log4j_fn)dlsym(h, "tadpole_lttng_log4j");
	lt_python_p = (lt_python_fn)dlsym(h, "tadpole_lttng_python");
	if (abi == NULL || abi() != LT_ABI || lt_enabled == NULL || lt_jul_p == NULL || lt_log4j_p == NULL ||
	    lt_python_p == NULL) {
		snprintf(err, errlen, "%s: not a libtadpole-lttng.so of interface %d", path, LT_ABI);
		dlclose(h);
		return -1;
	}
	return 0;
}

// The record's strings are NUL-terminated in one buffer b; the ints are
// their offsets.
static void lt_record(int domain, const char *b, int logger, int cls, int meth, int file, int tname, int when,
                      int line, long millis, int level, int tid) {
	if (!lt_enabled(domain))
		return;
	switch (domain) {
	case 4:
		lt_log4j_p(b, b + logger, b + cls, b + meth, b + file, line, millis, level, b + tname);
		break;
	case 5:
		lt_python_p(b + when, b, b + logger, b + meth, line, level, tid, b + tname);
		break;
	default:
		lt_jul_p(b, strlen(b), b + logger, strlen(b + logger), b + cls, strlen(b + cls), b + meth, strlen(b + meth),
		         millis, level, tid);
	}
}
*/
import "C"

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// LibName is the companion library the package loads.
const LibName = "libtadpole-lttng.so"

// LoadError is why the companion library could not be loaded.
type LoadError struct {
	Path, Reason string
}

func (e *LoadError) Error() string { return "lttngust: loading " + e.Path + ": " + e.Reason }

var domains = map[string]C.int{"jul": 3, "log4j": 4, "python": 5}

func init() { host.SetLTTngLoader(load) }

// load opens the companion named by cfg.Lib (option lttng_lib), or found next to the
// executable, or by the dynamic loader's search path.
func load(cfg host.LTTngConfig) (host.LTTngRecorder, error) {
	path := cfg.Lib
	if path == "" {
		path = LibName
		if exe, err := os.Executable(); err == nil {
			if p := filepath.Join(filepath.Dir(exe), LibName); fileExists(p) {
				path = p
			}
		}
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	if C.lt_open(cpath, &msg[0], C.size_t(len(msg))) != 0 {
		return nil, &LoadError{Path: path, Reason: C.GoString(&msg[0])}
	}
	return &recorder{domain: domains[cfg.Domain]}, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

type recorder struct{ domain C.int }

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Record implements host.LTTngRecorder: one cgo call, into lttng-ust's
// tracepoint, which records into every session that enabled the event
// and applies the session's filter.
func (x *recorder) Record(r host.LTTngRecord) {
	bp := bufs.Get().(*[]byte)
	b := (*bp)[:0]
	str := func(s string) C.int {
		off := len(b)
		b = append(b, s...)
		b = append(b, 0)
		return C.int(off)
	}
	str(r.Message) // at 0
	logger, cls, meth, file := str(r.Logger), str(r.Class), str(r.Method), str(r.File)
	tname, when := C.int(0), C.int(0)
	switch x.domain {
	case 4:
		tname = str("goroutine " + strconv.FormatInt(r.Thread, 10))
	case 5:
		tname = str("")
		when = str(time.UnixMilli(r.Millis).Format("2006-01-02 15:04:05,000"))
	}
	line := C.int(-1)
	if r.Line > 0 {
		line = C.int(r.Line)
	} else if x.domain == 5 {
		line = 0
	}
	C.lt_record(x.domain, (*C.char)(unsafe.Pointer(&b[0])), logger, cls, meth, file, tname, when, line,
		C.long(r.Millis), C.int(r.Level), C.int(r.Thread))
	*bp = b
	bufs.Put(bp)
}
