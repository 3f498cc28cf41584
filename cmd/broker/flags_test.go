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
	if cfg.HTTPAdvertise != "kairo-3:8080" || len(cfg.InitialVoters) != 0 {
		t.Fatalf("config: %+v", cfg)
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
