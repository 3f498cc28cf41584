// Command broker runs one KairoLog broker: the HTTP API on --listen, the
// metadata quorum on --raft-listen, data under --data-dir. With no flags it
// is a single-node broker on :8080 with ./data. SIGTERM or SIGINT stops it
// gracefully: leaderships move to other brokers first, then the HTTP server
// drains and the logs close cleanly.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kairolog/kairolog/broker"
	"github.com/kairolog/kairolog/broker/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		os.Exit(1)
	}
}

func newLogger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

func run(args []string) error {
	hostname, _ := os.Hostname()
	o, err := parseOptions(args, os.Getenv, hostname, os.Stderr)
	if errors.Is(err, flagHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := newLogger(o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	cfg, unknown, err := brokerConfig(o, hostname)
	if err != nil {
		return err
	}
	cfg.Logger = log
	for _, k := range unknown {
		log.Warn("Ignoring an unknown config key", "key", k, "file", o.configFile)
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	b, err := broker.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           server.New(b, server.Options{Logger: log, MaxBodyBytes: cfg.Settings.MaxRequestBytes}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("Broker starting", "id", cfg.ID, "listen", ln.Addr().String(), "advertised", cfg.HTTPAdvertise,
		"raft", cfg.RaftListen, "data", cfg.DataDir, "voters", o.initialVoters)

	if o.debugListen != "" {
		startDebugServer(log, o.debugListen)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	runDone := make(chan struct{})
	go func() { _ = b.Run(ctx); close(runDone) }()

	select {
	case <-ctx.Done():
		log.Info("Shutting down")
	case err := <-serveErr:
		log.Error("HTTP server stopped", "error", err)
	}
	stop()
	return shutdown(log, b, srv, runDone)
}

// shutdown moves leaderships away while still serving (followers and the
// controller need this broker's HTTP API meanwhile), then stops HTTP and
// closes the broker.
func shutdown(log *slog.Logger, b *broker.Broker, srv *http.Server, runDone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := b.ControlledShutdown(ctx); err != nil {
		log.Warn("Controlled shutdown did not complete; stopping anyway", "error", err)
	}
	httpCtx, cancelHTTP := context.WithTimeout(ctx, 5*time.Second)
	defer cancelHTTP()
	if err := srv.Shutdown(httpCtx); err != nil {
		srv.Close()
	}
	err := b.Close()
	<-runDone
	if err != nil {
		log.Error("Closing the broker failed", "error", err)
		return err
	}
	log.Info("Broker stopped")
	return nil
}
