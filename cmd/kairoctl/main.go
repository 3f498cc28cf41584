// Command kairoctl is the command line for KairoLog brokers: topics, produce,
// fetch, consumer groups, cluster state, a benchmark, and a local multi-broker
// cluster for development.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kairolog/kairolog/broker/api"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		var apiErr *api.Error
		if errors.As(err, &apiErr) {
			fmt.Fprintf(os.Stderr, "Error: %s (%s, HTTP %d)\n", apiErr.Message, apiErr.Code, apiErr.Status)
		} else {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		}
		os.Exit(1)
	}
}
