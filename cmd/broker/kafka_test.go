package main

import (
	"io"
	"net"
	"testing"
)

// TestKafkaListeners: the Kafka listener and the gateway take the --listen
// host with ports 9092 and 9095 unless told otherwise; the Kafka listener
// advertises the host clients can reach with the port it bound (port 0 is
// the one picked), the gateway localhost with its port, as kubectl
// port-forward exposes it.
func TestKafkaListeners(t *testing.T) {
	for _, tc := range []struct {
		args                    []string
		env                     map[string]string
		host                    string
		bound, boundGW          string // what the listeners bound
		kafka, gateway          string
		advertised, gwAdvertise string
	}{
		{nil, nil, "kairo-0", "[::]:9092", "[::]:9095", ":9092", ":9095", "kairo-0:9092", "localhost:9095"},
		{[]string{"--listen", "127.0.0.2:8080"}, nil, "", "127.0.0.2:9092", "127.0.0.2:9095", "127.0.0.2:9092", "127.0.0.2:9095", "127.0.0.2:9092", "localhost:9095"},
		{[]string{"--listen", "127.0.0.3:0", "--kafka-listen", "127.0.0.3:0", "--kafka-gateway-listen", "127.0.0.3:0"}, nil, "",
			"127.0.0.3:41234", "127.0.0.3:41235", "127.0.0.3:0", "127.0.0.3:0", "127.0.0.3:41234", "localhost:41235"},
		{[]string{"--advertised-address", "kairo-1.kairo:8080"}, nil, "x", "0.0.0.0:9092", "0.0.0.0:9095", ":9092", ":9095", "kairo-1.kairo:9092", "localhost:9095"},
		{nil, map[string]string{"KAIRO_KAFKA_ADVERTISED_ADDRESS": "kairo-2.kairo-headless.ns.svc:9092", "KAIRO_KAFKA_GATEWAY_ADVERTISED_ADDRESS": "gw.example:443"},
			"x", "[::]:9092", "[::]:9095", ":9092", ":9095", "kairo-2.kairo-headless.ns.svc:9092", "gw.example:443"},
	} {
		o, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, tc.host, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		kafka, gateway, err := kafkaListenAddresses(o)
		if err != nil || kafka != tc.kafka || gateway != tc.gateway {
			t.Errorf("%v: listen %q %q %v, want %q %q", tc.args, kafka, gateway, err, tc.kafka, tc.gateway)
		}
		cfg, _, err := brokerConfig(o, tc.host)
		if err != nil {
			t.Fatal(err)
		}
		bound, _ := net.ResolveTCPAddr("tcp", tc.bound)
		boundGW, _ := net.ResolveTCPAddr("tcp", tc.boundGW)
		if got, err := kafkaAdvertisedAddress(o, bound, cfg.HTTPAdvertise); err != nil || got != tc.advertised {
			t.Errorf("%v %v: Kafka advertised %q %v, want %q", tc.args, tc.env, got, err, tc.advertised)
		}
		if got, err := gatewayAdvertisedAddress(o, boundGW); err != nil || got != tc.gwAdvertise {
			t.Errorf("%v %v: gateway advertised %q %v, want %q", tc.args, tc.env, got, err, tc.gwAdvertise)
		}
	}
	for _, bad := range [][]string{{"--kafka-listen", "9092"}, {"--kafka-gateway-listen", "nohost"}} {
		o, err := parseOptions(bad, func(string) string { return "" }, "", io.Discard)
		if err == nil {
			_, _, err = kafkaListenAddresses(o)
		}
		if err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	for _, bad := range [][]string{{"--kafka-advertised-address", "nohost"}, {"--kafka-gateway-advertised-address", "x"}} {
		o, err := parseOptions(bad, func(string) string { return "" }, "", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := net.ResolveTCPAddr("tcp", "127.0.0.1:9092")
		_, err1 := kafkaAdvertisedAddress(o, addr, "h:8080")
		_, err2 := gatewayAdvertisedAddress(o, addr)
		if err1 == nil && err2 == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
