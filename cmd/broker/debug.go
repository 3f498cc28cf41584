package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// startDebugServer serves the runtime profiles on their own listener, so
// they are never reachable through the API port.
func startDebugServer(log *slog.Logger, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		log.Info("Serving profiles", "address", ln.Addr().String())
		if err := http.Serve(ln, mux); err != nil {
			log.Error("Profile server stopped", "error", err)
		}
	}()
}
