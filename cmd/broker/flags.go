package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/tlsconf"
)

// options are the command line of the broker; every flag also reads
// KAIRO_<FLAG> (upper case, dashes as underscores) when not given.
type options struct {
	id                int
	dataDir           string
	listen            string
	raftListen        string
	advertised        string
	peerListen        string
	peerAdvertised    string
	peerSecretFile    string
	tlsCertFile       string
	tlsKeyFile        string
	tlsCAFile         string
	peerTLS           string
	httpTLS           bool
	httpAuth          string
	kafkaTLS          bool
	kafkaAuth         string
	gatewayTLS        bool
	gatewayAuth       string
	authorization     bool
	superUsers        string
	kafkaListen       string
	kafkaAdvertised   string
	gatewayListen     string
	gatewayAdvertised string
	initialVoters     string
	bootstrapServers  string
	rack              string
	configFile        string
	logLevel          string
	logFormat         string
	raftLogLevel      string
	debugListen       string
}

// flagHelp reports that -h printed the usage.
var flagHelp = flag.ErrHelp

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "KAIRO_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func parseOptions(args []string, getenv func(string) string, hostname string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.id, "id", hostnameOrdinal(hostname), "broker id (default: the ordinal at the end of the hostname, so pod kairo-2 is broker 2; 0 if none)")
	fs.StringVar(&o.dataDir, "data-dir", "./data", "data directory: partition logs and the metadata quorum's state")
	fs.StringVar(&o.listen, "listen", ":8080", "HTTP listen address of the client API")
	fs.StringVar(&o.raftListen, "raft-listen", ":9093", "raft listen address of the metadata quorum")
	fs.StringVar(&o.advertised, "advertised-address", "", "host:port clients reach this broker's HTTP listener at (default: the listen host, or the hostname, with the listen port)")
	fs.StringVar(&o.peerListen, "peer-listen", "", "listen address of the peer listener, for calls from other brokers only (default: the --listen host with port 9094)")
	fs.StringVar(&o.peerAdvertised, "peer-advertised-address", "", "host:port other brokers reach this broker's peer listener at (default: the peer listen host, or the advertised host, with the peer listen port)")
	fs.StringVar(&o.kafkaListen, "kafka-listen", "", "listen address of the Kafka wire-protocol listener (default: the --listen host with port 9092; port 0 picks a free one)")
	fs.StringVar(&o.kafkaAdvertised, "kafka-advertised-address", "", "host:port Kafka clients reach this broker's Kafka listener at, as Kafka's Metadata names it (default: the Kafka listen host, or the advertised host, with the Kafka listen port)")
	fs.StringVar(&o.gatewayListen, "kafka-gateway-listen", "", "listen address of the Kafka gateway listener, which leads every partition and coordinates every group itself and passes requests on to their owners, for port-forwards (default: the --listen host with port 9095)")
	fs.StringVar(&o.gatewayAdvertised, "kafka-gateway-advertised-address", "", "host:port the gateway's Metadata names as the one broker (default: localhost with the gateway listen port, as kubectl port-forward exposes it)")
	fs.StringVar(&o.peerSecretFile, "peer-secret-file", "", "file holding the cluster secret brokers prove to each other (required with other brokers; a lone broker without one generates its own)")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "PEM certificate of this broker (a broker certificate of the cluster CA), for TLS between brokers and on client listeners that have TLS on")
	fs.StringVar(&o.tlsKeyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.StringVar(&o.tlsCAFile, "tls-ca-file", "", "PEM bundle of the CAs this broker trusts for other brokers' and clients' certificates")
	fs.StringVar(&o.peerTLS, "peer-tls", "", "mutual TLS on the peer and raft transports: off, permissive (TLS and plain, the step of a rolling change) or required (default: required with --tls-cert-file, else off)")
	fs.BoolVar(&o.httpTLS, "http-tls", false, "serve the HTTP client API over TLS with --tls-cert-file; client certificates of --tls-ca-file are verified when sent")
	fs.StringVar(&o.httpAuth, "http-authentication", "none", "how HTTP clients authenticate: none, scram-sha-512 (HTTP Basic against the users' SCRAM credentials; needs --http-tls) or tls (a client certificate of the cluster CA; needs --http-tls)")
	fs.BoolVar(&o.kafkaTLS, "kafka-tls", false, "serve the Kafka listener over TLS with --tls-cert-file (Kafka's SSL and SASL_SSL); client certificates of --tls-ca-file are verified when sent")
	fs.StringVar(&o.kafkaAuth, "kafka-authentication", "none", "how Kafka clients authenticate on the Kafka listener: none (anonymous, unless a client offers a SASL login, which is checked as with scram-sha-512), scram-sha-512 (SASL SCRAM-SHA-512 against the users' SCRAM credentials, and SASL PLAIN against the same credentials when --kafka-tls is on) or tls (a client certificate of the cluster CA; needs --kafka-tls)")
	fs.BoolVar(&o.gatewayTLS, "kafka-gateway-tls", false, "serve the Kafka gateway listener over TLS with --tls-cert-file, as --kafka-tls does the Kafka listener")
	fs.StringVar(&o.gatewayAuth, "kafka-gateway-authentication", "none", "how Kafka clients authenticate on the Kafka gateway listener: none, scram-sha-512 or tls, as --kafka-authentication")
	fs.BoolVar(&o.authorization, "authorization", false, "check every client request, HTTP and Kafka, against the users' ACLs (HTTP 403 or Kafka's *_AUTHORIZATION_FAILED when none allows it; anonymous requests are refused)")
	fs.StringVar(&o.superUsers, "super-users", "", "comma-separated user names that may do anything whatever the ACLs say (the operator's certificate always may)")
	fs.StringVar(&o.initialVoters, "initial-voters", "", "metadata quorum at bootstrap: 0@host:9093,1@host:9093,… (empty: a one-voter cluster of this broker)")
	fs.StringVar(&o.bootstrapServers, "bootstrap-servers", "", "peer addresses to register through when not a voter (default: the voters' hosts with this broker's peer port)")
	fs.StringVar(&o.rack, "rack", "", "rack or zone, to spread replicas")
	fs.StringVar(&o.configFile, "config-file", "", "Java-properties file of broker settings (docs/configuration.md)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json")
	fs.StringVar(&o.raftLogLevel, "raft-log-level", "warn", "log level of the raft library: debug, info, warn, error or off")
	fs.StringVar(&o.debugListen, "debug-listen", "", "serve Go's /debug/pprof profiles on this address (off when empty; keep it private)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: broker [flags]\n\nRuns a KairoLog broker. Every flag can also be set with KAIRO_<FLAG>, e.g. KAIRO_DATA_DIR.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flagHelp
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envErr != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if o.id < 0 {
		return nil, fmt.Errorf("--id must not be negative")
	}
	return o, nil
}

var ordinalRE = regexp.MustCompile(`-(\d+)$`)

// hostnameOrdinal is the StatefulSet ordinal of a pod name ("kairo-2" → 2).
func hostnameOrdinal(hostname string) int {
	host, _, _ := strings.Cut(hostname, ".")
	m := ordinalRE.FindStringSubmatch(host)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// advertisedAddress is --advertised-address or one derived from the listen
// address: its host when it names one, else the hostname.
func advertisedAddress(o *options, hostname string) (string, error) {
	if o.advertised != "" {
		if _, _, err := net.SplitHostPort(o.advertised); err != nil {
			return "", fmt.Errorf("--advertised-address %q: %w", o.advertised, err)
		}
		return o.advertised, nil
	}
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", o.listen, err)
	}
	if host == "" || net.ParseIP(host).IsUnspecified() {
		host = hostname
		if host == "" {
			host = "127.0.0.1"
		}
	}
	return net.JoinHostPort(host, port), nil
}

// DefaultPeerPort is the peer listener's port when --peer-listen is not set.
const DefaultPeerPort = "9094"

// peerListenAddress is --peer-listen, or the --listen host with
// DefaultPeerPort: brokers started on different loopback addresses do not
// collide.
func peerListenAddress(o *options) (string, error) {
	if o.peerListen != "" {
		if _, _, err := net.SplitHostPort(o.peerListen); err != nil {
			return "", fmt.Errorf("--peer-listen %q: %w", o.peerListen, err)
		}
		return o.peerListen, nil
	}
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", o.listen, err)
	}
	return net.JoinHostPort(host, DefaultPeerPort), nil
}

// peerAdvertisedAddress is --peer-advertised-address, or the peer listen
// host (when it names one) or else the advertised HTTP host, with the peer
// listen port.
func peerAdvertisedAddress(o *options, peerListen, httpAdvertised string) (string, error) {
	if o.peerAdvertised != "" {
		if _, _, err := net.SplitHostPort(o.peerAdvertised); err != nil {
			return "", fmt.Errorf("--peer-advertised-address %q: %w", o.peerAdvertised, err)
		}
		return o.peerAdvertised, nil
	}
	host, port, _ := net.SplitHostPort(peerListen)
	if host == "" || net.ParseIP(host).IsUnspecified() {
		host, _, _ = net.SplitHostPort(httpAdvertised)
	}
	return net.JoinHostPort(host, port), nil
}

// tlsFiles are the --tls-* files.
func tlsFiles(o *options) tlsconf.Files {
	return tlsconf.Files{CertFile: o.tlsCertFile, KeyFile: o.tlsKeyFile, CAFile: o.tlsCAFile}
}

// peerTLS is the TLS between brokers that --peer-tls and the --tls-*
// files ask for.
func peerTLS(o *options) (*tlsconf.Transport, error) {
	files := tlsFiles(o)
	mode := tlsconf.ModeOff
	if !files.IsZero() {
		mode = tlsconf.ModeRequired
	}
	if o.peerTLS != "" {
		var err error
		if mode, err = tlsconf.ParseMode(o.peerTLS); err != nil {
			return nil, fmt.Errorf("--peer-tls: %w", err)
		}
	}
	if mode == tlsconf.ModeOff && files.IsZero() {
		return nil, nil
	}
	m, err := tlsconf.Load(files)
	if err != nil {
		return nil, err
	}
	return tlsconf.NewTransport(m, mode)
}

// httpSecurity is the TLS (nil: plain) and the authentication and
// authorization of the HTTP client listener.
func httpSecurity(o *options) (*tls.Config, auth.Listener, error) {
	authn, err := auth.ParseAuthentication(o.httpAuth)
	if err != nil {
		return nil, auth.Listener{}, fmt.Errorf("--http-authentication: %w", err)
	}
	sec := auth.Listener{Authentication: authn, Authorization: o.authorization,
		Authorizer: auth.Authorizer{SuperUsers: splitList(o.superUsers)}}
	if !o.httpTLS {
		if authn != auth.AuthNone {
			return nil, sec, fmt.Errorf("--http-authentication=%s needs --http-tls: Basic sends the password, a certificate needs the handshake", authn)
		}
		return nil, sec, nil
	}
	m, err := tlsconf.Load(tlsFiles(o))
	if err != nil {
		return nil, sec, fmt.Errorf("--http-tls: %w", err)
	}
	return m.ServerConfig(), sec, nil
}

// kafkaSecurity is the TLS (nil: plain) and the authentication and
// authorization of a Kafka listener: flag is the listener's flag prefix
// (kafka or kafka-gateway), tlsOn and authName its two flags' values.
// SCRAM needs no TLS (it never sends the password; PLAIN, which does, is
// offered only over TLS); a certificate needs the TLS handshake.
func kafkaSecurity(o *options, flag string, tlsOn bool, authName string) (*tls.Config, auth.Listener, error) {
	authn, err := auth.ParseAuthentication(authName)
	if err != nil {
		return nil, auth.Listener{}, fmt.Errorf("--%s-authentication: %w", flag, err)
	}
	sec := auth.Listener{Authentication: authn, Authorization: o.authorization,
		Authorizer: auth.Authorizer{SuperUsers: splitList(o.superUsers)}}
	if !tlsOn {
		if authn == auth.AuthTLS {
			return nil, sec, fmt.Errorf("--%s-authentication=tls needs --%s-tls: a certificate needs the handshake", flag, flag)
		}
		return nil, sec, nil
	}
	m, err := tlsconf.Load(tlsFiles(o))
	if err != nil {
		return nil, sec, fmt.Errorf("--%s-tls: %w", flag, err)
	}
	return m.ServerConfig(), sec, nil
}

// splitList is a comma-separated flag's values, without blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// brokerConfig builds the broker's Config from the options.
func brokerConfig(o *options, hostname string) (config.Config, []string, error) {
	cfg := config.Config{ID: int32(o.id), DataDir: o.dataDir, RaftListen: o.raftListen, Rack: o.rack,
		RaftLogLevel: o.raftLogLevel, Settings: config.DefaultSettings()}
	var err error
	if cfg.HTTPAdvertise, err = advertisedAddress(o, hostname); err != nil {
		return cfg, nil, err
	}
	peerListen, err := peerListenAddress(o)
	if err != nil {
		return cfg, nil, err
	}
	if cfg.PeerAdvertise, err = peerAdvertisedAddress(o, peerListen, cfg.HTTPAdvertise); err != nil {
		return cfg, nil, err
	}
	if o.peerSecretFile != "" {
		if cfg.PeerSecret, err = peer.ReadSecretFile(o.peerSecretFile); err != nil {
			return cfg, nil, fmt.Errorf("--peer-secret-file: %w", err)
		}
	}
	if cfg.PeerTLS, err = peerTLS(o); err != nil {
		return cfg, nil, err
	}
	if cfg.InitialVoters, err = cluster.ParseVoters(o.initialVoters); err != nil {
		return cfg, nil, fmt.Errorf("--initial-voters: %w", err)
	}
	for _, s := range strings.Split(o.bootstrapServers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			s = strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://")
			cfg.BootstrapServers = append(cfg.BootstrapServers, s)
		}
	}
	var unknown []string
	if o.configFile != "" {
		f, err := os.Open(o.configFile)
		if err != nil {
			return cfg, nil, fmt.Errorf("--config-file: %w", err)
		}
		defer f.Close()
		props, err := config.ParseProperties(f)
		if err != nil {
			return cfg, nil, fmt.Errorf("--config-file %s: %w", o.configFile, err)
		}
		if unknown, err = cfg.Settings.Apply(props); err != nil {
			return cfg, nil, fmt.Errorf("--config-file %s: %w", o.configFile, err)
		}
		for name := range props {
			if !slices.Contains(unknown, name) {
				cfg.GivenSettings = append(cfg.GivenSettings, name)
			}
		}
	}
	return cfg, unknown, nil
}
