package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestHostnameOrdinal(t *testing.T) {
	for host, want := range map[string]int{"kairo-2": 2, "kairo-10.kairo.ns.svc": 10, "my-broker-0": 0, "laptop": 0, "": 0, "kairo-x": 0} {
		if got := hostnameOrdinal(host); got != want {
			t.Errorf("hostnameOrdinal(%q) = %d, want %d", host, got, want)
		}
	}
}

func TestDefaultsAreTheSingleNodeBroker(t *testing.T) {
	o, err := parseOptions(nil, func(string) string { return "" }, "kairo-3", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.id != 3 || o.listen != ":8080" || o.raftListen != ":9093" || o.dataDir != "./data" || o.initialVoters != "" {
		t.Fatalf("defaults: %+v", o)
	}
	cfg, _, err := brokerConfig(o, "kairo-3")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPAdvertise != "kairo-3:8080" || cfg.PeerAdvertise != "kairo-3:9094" || len(cfg.InitialVoters) != 0 || !cfg.PeerSecret.IsZero() {
		t.Fatalf("config: %+v", cfg)
	}
	if l, err := peerListenAddress(o); err != nil || l != ":9094" {
		t.Fatalf("peer listen address %q %v", l, err)
	}
}

// TestPeerListener: the peer listener takes the --listen host with port
// 9094 unless told otherwise, so brokers on different loopback addresses
// do not collide, and advertises the host other brokers can reach.
func TestPeerListener(t *testing.T) {
	for _, tc := range []struct {
		args                     []string
		env                      map[string]string
		listen, advertised, host string
	}{
		{nil, nil, ":9094", "host:9094", "host"},
		{[]string{"--listen", "127.0.0.2:8080"}, nil, "127.0.0.2:9094", "127.0.0.2:9094", ""},
		{[]string{"--listen", "127.0.0.3:18080", "--peer-listen", "127.0.0.3:19094"}, nil, "127.0.0.3:19094", "127.0.0.3:19094", ""},
		{[]string{"--advertised-address", "kairo-1.kairo:8080"}, nil, ":9094", "kairo-1.kairo:9094", "x"},
		{nil, map[string]string{"KAIRO_PEER_LISTEN": "0.0.0.0:7000", "KAIRO_ADVERTISED_ADDRESS": "b:8080"}, "0.0.0.0:7000", "b:7000", "x"},
		{[]string{"--peer-advertised-address", "peer.example:443"}, nil, ":9094", "peer.example:443", "x"},
	} {
		o, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, tc.host, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		l, err := peerListenAddress(o)
		if err != nil || l != tc.listen {
			t.Errorf("%v %v: peer listen %q %v, want %q", tc.args, tc.env, l, err, tc.listen)
		}
		cfg, _, err := brokerConfig(o, tc.host)
		if err != nil || cfg.PeerAdvertise != tc.advertised {
			t.Errorf("%v %v: peer advertised %q %v, want %q", tc.args, tc.env, cfg.PeerAdvertise, err, tc.advertised)
		}
	}
	for _, bad := range [][]string{{"--peer-listen", "9094"}, {"--peer-advertised-address", "nohost"}} {
		o, err := parseOptions(bad, func(string) string { return "" }, "", io.Discard)
		if err == nil {
			_, _, err = brokerConfig(o, "")
		}
		if err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestPeerSecretFile: the secret is read from the file (a mounted
// Kubernetes Secret), without its trailing newline; a missing or short one
// stops the broker from starting.
func TestPeerSecretFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "secret")
	os.WriteFile(good, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("tiny\n"), 0o600)
	env := map[string]string{"KAIRO_PEER_SECRET_FILE": good}
	o, err := parseOptions(nil, func(k string) string { return env[k] }, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := brokerConfig(o, "")
	if err != nil || cfg.PeerSecret.Reveal() != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("secret from KAIRO_PEER_SECRET_FILE: %v", err)
	}
	for _, path := range []string{short, filepath.Join(dir, "missing")} {
		o, _ := parseOptions([]string{"--peer-secret-file", path}, func(string) string { return "" }, "", io.Discard)
		if _, _, err := brokerConfig(o, ""); err == nil {
			t.Errorf("%s accepted", path)
		}
	}
}

func TestEnvironmentAndFlags(t *testing.T) {
	env := map[string]string{"KAIRO_ID": "7", "KAIRO_DATA_DIR": "/var/lib/kairo", "KAIRO_LISTEN": "0.0.0.0:9000",
		"KAIRO_INITIAL_VOTERS": "0@a:9093,1@b:9093", "KAIRO_RACK": "zone-a"}
	o, err := parseOptions([]string{"--id", "1", "--advertised-address", "b.kairo:9000"}, func(k string) string { return env[k] }, "host", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.id != 1 || o.dataDir != "/var/lib/kairo" || o.listen != "0.0.0.0:9000" || o.rack != "zone-a" {
		t.Fatalf("a flag must win over its variable, a variable over the default: %+v", o)
	}
	cfg, _, err := brokerConfig(o, "host")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.InitialVoters) != 2 || cfg.InitialVoters[1].Address != "b:9093" || cfg.HTTPAdvertise != "b.kairo:9000" {
		t.Fatalf("config: %+v", cfg)
	}
	if _, err := parseOptions(nil, func(k string) string { return map[string]string{"KAIRO_ID": "two"}[k] }, "", io.Discard); err == nil {
		t.Fatal("a bad KAIRO_ID was accepted")
	}
	if _, err := parseOptions([]string{"--initial-voters", "zero@x"}, func(string) string { return "" }, "", io.Discard); err != nil {
		t.Fatal(err) // parsed later
	}
	o, _ = parseOptions([]string{"--initial-voters", "zero@x"}, func(string) string { return "" }, "", io.Discard)
	if _, _, err := brokerConfig(o, ""); err == nil {
		t.Fatal("bad voters accepted")
	}
}

func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	os.WriteFile(path, []byte("# written by the operator\nnum.partitions=6\ngroup.stale.timeout.ms=30000\nlog.retention.ms=-1\nfuture.key=1\n"), 0o644)
	o, err := parseOptions([]string{"--config-file", path}, func(string) string { return "" }, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, unknown, err := brokerConfig(o, "")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings
	if s.NumPartitions != 6 || s.GroupStaleTimeout != 30*time.Second || s.LogRetentionMs != -time.Millisecond {
		t.Fatalf("settings: %+v", s)
	}
	if len(unknown) != 1 || unknown[0] != "future.key" {
		t.Fatalf("unknown: %v", unknown)
	}
	os.WriteFile(path, []byte("num.partitions=lots\n"), 0o644)
	if _, _, err := brokerConfig(o, ""); err == nil {
		t.Fatal("a bad value was accepted")
	}
}
