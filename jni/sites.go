package jni

/*
#include <stdlib.h>
#include "tpjc.h"
*/
import "C"

import (
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/jvm/instrument"
)

// logSites are the java.util.logging.Logger calls whose site names a
// record's source: the calls for which JUL's LogRecord infers it from the
// stack. logp, logrb, entering, exiting, throwing and log(LogRecord) may
// carry their own source: their records are asked (see source.c).
var logSites = []instrument.SiteTarget{{Owner: "java/util/logging/Logger",
	Names: []string{"severe", "warning", "info", "config", "fine", "finer", "finest", "log"}}}

// siteSkip are the classes JUL's caller inference passes over (logging
// machinery, reflection, method handles): a call from them is no source.
var siteSkip = []string{"java/util/logging/", "sun/util/logging/", "jdk/internal/logger/", "java/lang/invoke/",
	"jdk/internal/reflect/", "java/lang/reflect/", "java/security/AccessController", "sun/rmi/runtime/Log"}

// sitesOn: the rewriter adds call-site probes (LTTng recording with
// lttng_source on); set from the options before the first class loads.
var sitesOn atomic.Bool

// sites gives one id per calling method: the LTTng event's source is the
// class and method, whatever the line.
var sites struct {
	mu   sync.Mutex
	ids  map[[2]string]int32
	next int32
}

// setSites decides from the agent's options whether classes get site
// probes.
func setSites(opts string) {
	cfg := agent.DefaultConfig()
	_ = cfg.ApplyEnv(nil)
	_ = cfg.ParseOptions(opts) // what does not parse keeps its default; the agent says so
	sitesOn.Store(cfg.LTTng && cfg.LTTngSource && cfg.LTTngLib != "none" && cfg.LogsTo != agent.LogsToHQ)
}

// tpjGoSitesOn reports whether classes get call-site probes (the
// options; the hook also wants the companion loaded).
//
//export tpjGoSitesOn
func tpjGoSitesOn() C.int {
	if sitesOn.Load() {
		return 1
	}
	return 0
}

// sitesWanted reports whether class name (boot: of the bootstrap loader)
// gets call-site probes when no method of it is traced: the application's
// classes, as the default trace policy selects them, whatever trace= and
// HQ's filters say of method tracing; not the JDK's (their records'
// sources come from the stack).
func sitesWanted(name string, boot bool) bool {
	if !sitesOn.Load() || boot || never(name) || isJDK(name) {
		return false
	}
	for _, p := range siteSkip {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

// siteConfig adds the call-site probes to an instrumenter's config.
func siteConfig(cfg *instrument.Config) {
	if !sitesOn.Load() {
		return
	}
	cfg.Sites = logSites
	cfg.SiteID = siteID
}

// siteID is the instrument.SiteFunc of the JVM agent: the id of the
// calling method, named in C for the LTTng recorder.
func siteID(class, method, _ string, _ int32, _, _ string) (int32, bool) {
	for _, p := range siteSkip {
		if strings.HasPrefix(class, p) {
			return 0, false
		}
	}
	key := [2]string{class, method}
	sites.mu.Lock()
	defer sites.mu.Unlock()
	if id, ok := sites.ids[key]; ok {
		return id, true
	}
	if sites.next >= C.TPJ_MAX_SITES {
		return 0, false
	}
	id := sites.next + 1
	cc := C.CString(strings.ReplaceAll(class, "/", "."))
	cm := C.CString(method)
	rc := C.tpj_site_set(C.int(id), cc, cm)
	C.free(unsafe.Pointer(cc))
	C.free(unsafe.Pointer(cm))
	if rc != 0 {
		return 0, false
	}
	if sites.ids == nil {
		sites.ids = make(map[[2]string]int32)
	}
	sites.ids[key] = id
	sites.next = id
	return id, true
}

// siteNames reads the class and method C keeps for site id.
func siteNames(id int32, cls, method *string) bool {
	var c, m *C.char
	var cn, mn C.size_t
	if C.tpj_site_get(C.int(id), &c, &cn, &m, &mn) != 0 {
		return false
	}
	*cls, *method = C.GoStringN(c, C.int(cn)), C.GoStringN(m, C.int(mn))
	return true
}
