// Command example is a small Go service traced by tadpole: a pool of
// workers serving orders, with nested calls, failures and log records.
//
// Run it under the reference HQ, which sets TADPOLE_HQ for it:
//
//	./build.sh demo
//
// or against an HQ already listening:
//
//	TADPOLE_HQ=127.0.0.1:8765 go run ./examples/go
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
)

var (
	mServe    = agent.NewMethod("example/Shop.serve;1;(I)V")
	mPrice    = agent.NewMethod("example/Shop.price;2;(I)J")
	mReserve  = agent.NewMethod("example/Stock.reserve;1;(II)Z")
	mCharge   = agent.NewMethod("example/Payments.charge;1;(J)V")
	excRefuse = agent.ErrorType(&PaymentRefusedError{})
)

func main() {
	orders := flag.Int("orders", 20000, "orders to serve")
	workers := flag.Int("workers", 8, "worker goroutines")
	flag.Parse()

	cfg, err := agent.LoadConfig("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(2)
	}
	var a *agent.Agent
	if cfg.HQ != "" {
		// An absent HQ is not fatal: the service runs untraced.
		a, _ = agent.Start(context.Background(), cfg)
	}
	// TADPOLE_HCE=127.0.0.1:10006 registers the service with an HCE hub.
	defer agent.StartHCE(cfg)()

	// TADPOLE_J4P=127.0.0.1:8778 serves tadpole's MBeans over Jolokia.
	mgmt, err := agent.StartManagement(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "example: no management endpoint:", err)
	}

	log := slog.New(agent.NewSlogHandler("example.shop", nil))
	stock := slog.New(agent.NewSlogHandler("example.stock", &agent.SlogOptions{Level: slog.LevelWarn}))

	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	served, failed := 0, 0
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent.SetThreadName(fmt.Sprintf("worker-%d", w))
			for id := range jobs {
				err := serve(id, stock)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					served++
				}
				mu.Unlock()
			}
		}()
	}
	for id := 0; id < *orders; id++ {
		if id%5000 == 0 {
			log.Info("progress", "order", id)
		}
		jobs <- id
	}
	close(jobs)
	wg.Wait()
	log.Info("done", "served", served, "failed", failed)
	agent.Mark("summary", fmt.Sprintf("served=%d failed=%d", served, failed))

	if mgmt != nil {
		printRead(mgmt.Addr().String(), "io.tadpole:type=Agent/Events")
	}
	if a != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "example: trace incomplete:", err)
		}
	}
	fmt.Printf("served %d orders (%d failed) with %d workers in %v\n",
		served, failed, *workers, time.Since(start).Round(time.Millisecond))
}

// printRead reads one attribute from the management endpoint, as curl
// would, and prints the answer.
func printRead(addr, path string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/jolokia/read/" + path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "example: j4p read:", err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Printf("j4p read %s: %s\n", path, body)
}

// PaymentRefusedError is a refused charge.
type PaymentRefusedError struct{ Amount int64 }

func (e *PaymentRefusedError) Error() string { return fmt.Sprintf("payment of %d refused", e.Amount) }

// OutOfStockError is a failed reservation; its type names the exception
// in the trace.
type OutOfStockError struct{ Order int }

func (e *OutOfStockError) Error() string { return fmt.Sprintf("order %d: out of stock", e.Order) }

func serve(id int, stock *slog.Logger) (err error) {
	defer mServe.Enter().ExitErr(&err)
	p := price(id)
	if !reserve(id, stock) {
		return &OutOfStockError{Order: id}
	}
	return charge(p)
}

func price(id int) int64 {
	defer mPrice.Enter().Exit()
	return int64(100 + id%17)
}

func reserve(id int, stock *slog.Logger) bool {
	defer mReserve.Enter().Exit()
	if id%97 == 0 {
		stock.Warn("out of stock", "order", id)
		return false
	}
	return true
}

func charge(amount int64) (err error) {
	f := mCharge.Enter()
	if rand.IntN(200) == 0 {
		mCharge.Throw(excRefuse, 42)
		mCharge.Bubble(excRefuse)
		return &PaymentRefusedError{Amount: amount}
	}
	f.Exit()
	return nil
}
