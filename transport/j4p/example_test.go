package j4p_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/tadpole-trace/tadpole/transport/j4p"
)

func Example() {
	reg := j4p.NewRegistry()
	reg.Register(j4p.MustObjectName("app:type=Shop"), &j4p.StaticBean{
		Attrs: []j4p.Attr{{Name: "Orders", Type: "long", Get: func() (any, error) {
			return map[string]any{"open": 3, "done": 40}, nil
		}}},
	})
	cfg := j4p.DefaultConfig()
	cfg.Now = func() time.Time { return time.Unix(1700000000, 0) }
	h, err := j4p.NewHandler(&cfg, reg)
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/jolokia/read/app:type=Shop/Orders/open", nil)
	r.RemoteAddr = "127.0.0.1:50000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 200 {"request":{"type":"read","mbean":"app:type=Shop","attribute":"Orders","path":"open"},"value":3,"timestamp":1700000000,"status":200}
}
