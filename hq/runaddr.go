package hq

import "net"

// LocalAddr returns HQ's end of the run's control connection.
func (r *Run) LocalAddr() net.Addr { return r.ctl.LocalAddr() }
