// Command broker runs one KairoLog broker: the client API on --listen, the
// Kafka wire protocol on --kafka-listen (port 9092) and its gateway on
// --kafka-gateway-listen (port 9095), the peer listener for other brokers
// on --peer-listen (port 9094), the metadata quorum on --raft-listen, data
// under --data-dir. With no flags it
// is a single-node broker on :8080 with ./data. SIGTERM or SIGINT stops it
// gracefully: leaderships move to other brokers first, then the HTTP
// servers drain and the logs close cleanly.
package main

import (
	"context"
	"crypto/tls"
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

	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/httpapi"
	"github.com/kairolog/kairolog/broker/tlsconf"
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

	peerListen, err := peerListenAddress(o)
	if err != nil {
		return err
	}
	httpTLS, httpSec, err := httpSecurity(o)
	if err != nil {
		return err
	}
	kafkaSec, err := kafkaSecurities(o)
	if err != nil {
		return err
	}
	inherited, err := takeInheritedSockets()
	if err != nil {
		return err
	}
	defer inherited.close()
	ln, err := inherited.listen(o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	peerLn, err := inherited.listen(peerListen)
	if err != nil {
		ln.Close()
		return fmt.Errorf("--peer-listen: %w", err)
	}
	kafkaLns, err := listenKafka(o, &cfg, inherited)
	if err != nil {
		ln.Close()
		peerLn.Close()
		return err
	}
	if inherited.has(cfg.RaftListen) {
		cfg.RaftListener, err = inherited.listen(cfg.RaftListen)
	}
	var debugLn net.Listener
	if err == nil && o.debugListen != "" {
		// The profiles are optional: a broker whose debug port is taken
		// still serves.
		var derr error
		if debugLn, derr = inherited.listen(o.debugListen); derr != nil {
			log.Error("Profile server not started", "error", derr)
		}
	}
	if err == nil {
		err = inherited.unused()
	}
	if err != nil {
		ln.Close()
		peerLn.Close()
		kafkaLns.close()
		if cfg.RaftListener != nil {
			cfg.RaftListener.Close()
		}
		if debugLn != nil {
			debugLn.Close()
		}
		return err
	}
	generated := cfg.PeerSecret.IsZero()
	b, err := core.New(cfg)
	if err != nil {
		ln.Close()
		peerLn.Close()
		kafkaLns.close()
		return err
	}
	budget := b.Memory()
	tuneGC(log, func() uint64 { return uint64(budget.Requests.InUse() + budget.Responses.InUse()) })
	if generated {
		log.Info("No cluster secret configured: this lone broker generated one, so no other broker can join it (set --peer-secret-file on every broker of a cluster)")
	}
	public := httpapi.New(b, httpapi.Options{Logger: log, MaxBodyBytes: cfg.Settings.MaxRequestBytes,
		BodyTimeout: cfg.Settings.ClientIOTimeout, Security: httpSec})
	if httpTLS != nil {
		ln = tls.NewListener(ln, httpTLS)
	}
	srv := newHTTPServer(log, public)
	// TLS between brokers wraps the peer listener without touching the
	// handler: mutual TLS admits only broker certificates, and every call
	// must still carry the cluster secret.
	peerLn = cfg.PeerTLS.Listener(peerLn)
	peerSrv := newHTTPServer(log, b.PeerHandler())
	kafkaSrvs := newKafkaServers(log, b, cfg, kafkaLns, kafkaSec)
	log.Info("Broker starting", "id", cfg.ID, "listen", ln.Addr().String(), "advertised", cfg.HTTPAdvertise,
		"http_tls", httpTLS != nil, "http_authentication", httpSec.Authentication, "authorization", httpSec.Authorization,
		"peer_listen", peerLn.Addr().String(), "peer_advertised", cfg.PeerAdvertise, "peer_tls", peerTLSMode(cfg),
		"kafka_listen", kafkaLns.kafka.Addr().String(), "kafka_advertised", cfg.KafkaAdvertise,
		"kafka_tls", kafkaSec.kafkaTLS != nil, "kafka_authentication", kafkaSec.kafka.Authentication,
		"kafka_gateway_listen", kafkaLns.gateway.Addr().String(), "kafka_gateway_advertised", kafkaLns.gatewayAdvertised,
		"kafka_gateway_tls", kafkaSec.gatewayTLS != nil, "kafka_gateway_authentication", kafkaSec.gateway.Authentication,
		"raft", cfg.RaftListen, "data", cfg.DataDir, "voters", o.initialVoters)

	if debugLn != nil {
		startDebugServer(log, debugLn)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 4)
	go func() { serveErr <- fmt.Errorf("client listener: %w", srv.Serve(ln)) }()
	go func() { serveErr <- fmt.Errorf("peer listener: %w", peerSrv.Serve(peerLn)) }()
	kafkaSrvs.serve(kafkaLns, serveErr)
	runDone := make(chan struct{})
	go func() { _ = b.Run(ctx); close(runDone) }()

	select {
	case <-ctx.Done():
		log.Info("Shutting down")
	case err := <-serveErr:
		log.Error("A listener stopped", "error", err)
	}
	stop()
	return shutdown(log, b, []*http.Server{srv, peerSrv}, kafkaSrvs, runDone)
}

func peerTLSMode(cfg config.Config) string {
	if cfg.PeerTLS == nil {
		return string(tlsconf.ModeOff)
	}
	return string(cfg.PeerTLS.Mode)
}

func newHTTPServer(log *slog.Logger, h http.Handler) *http.Server {
	return &http.Server{
		Handler: h,
		// Headers are small and must arrive promptly: every connection
		// reading them holds up to MaxHeaderBytes until then. Bodies and
		// replies have their own deadline (client.io.timeout.ms).
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// maxHeaderBytes bounds a request's line and headers (net/http's default
// is 1 MiB): the API's requests need a few hundred bytes.
const maxHeaderBytes = 32 << 10

// shutdown moves leaderships away while still serving (followers and the
// controller need this broker's peer listener meanwhile), then stops both
// listeners and closes the broker.
func shutdown(log *slog.Logger, b *core.Broker, srvs []*http.Server, kafkaSrvs kafkaServers, runDone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := b.ControlledShutdown(ctx); err != nil {
		log.Warn("Controlled shutdown did not complete; stopping anyway", "error", err)
	}
	httpCtx, cancelHTTP := context.WithTimeout(ctx, 5*time.Second)
	defer cancelHTTP()
	for _, srv := range srvs {
		if err := srv.Shutdown(httpCtx); err != nil {
			srv.Close()
		}
	}
	kafkaSrvs.close()
	err := b.Close()
	<-runDone
	if err != nil {
		log.Error("Closing the broker failed", "error", err)
		return err
	}
	log.Info("Broker stopped")
	return nil
}
