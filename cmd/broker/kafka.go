package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/kafka"
)

// Default ports of the Kafka listeners when --kafka-listen and
// --kafka-gateway-listen are not set: Kafka's own, and the gateway's.
const (
	DefaultKafkaPort   = "9092"
	DefaultGatewayPort = "9095"
)

// kafkaListenAddresses are --kafka-listen and --kafka-gateway-listen, or the
// --listen host with the default ports: brokers on different loopback
// addresses do not collide.
func kafkaListenAddresses(o *options) (kafka, gateway string, err error) {
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return "", "", fmt.Errorf("--listen %q: %w", o.listen, err)
	}
	pick := func(flag, set, port string) (string, error) {
		if set == "" {
			return net.JoinHostPort(host, port), nil
		}
		if _, _, err := net.SplitHostPort(set); err != nil {
			return "", fmt.Errorf("--%s %q: %w", flag, set, err)
		}
		return set, nil
	}
	if kafka, err = pick("kafka-listen", o.kafkaListen, DefaultKafkaPort); err != nil {
		return "", "", err
	}
	gateway, err = pick("kafka-gateway-listen", o.gatewayListen, DefaultGatewayPort)
	return kafka, gateway, err
}

// kafkaAdvertisedAddress is --kafka-advertised-address, or the host of the
// bound Kafka listener (when it names one) or else the advertised HTTP
// host, with the bound port (a listen port of 0 is the one picked).
func kafkaAdvertisedAddress(o *options, bound net.Addr, httpAdvertised string) (string, error) {
	if o.kafkaAdvertised != "" {
		if _, _, err := net.SplitHostPort(o.kafkaAdvertised); err != nil {
			return "", fmt.Errorf("--kafka-advertised-address %q: %w", o.kafkaAdvertised, err)
		}
		return o.kafkaAdvertised, nil
	}
	host, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host, _, _ = net.SplitHostPort(httpAdvertised)
	}
	return net.JoinHostPort(host, port), nil
}

// gatewayAdvertisedAddress is --kafka-gateway-advertised-address, or
// localhost with the bound gateway port: the gateway is meant for clients
// that reach it through kubectl port-forward, which listens on localhost.
func gatewayAdvertisedAddress(o *options, bound net.Addr) (string, error) {
	if o.gatewayAdvertised != "" {
		if _, _, err := net.SplitHostPort(o.gatewayAdvertised); err != nil {
			return "", fmt.Errorf("--kafka-gateway-advertised-address %q: %w", o.gatewayAdvertised, err)
		}
		return o.gatewayAdvertised, nil
	}
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("localhost", port), nil
}

// kafkaListeners are the bound Kafka and gateway listeners.
type kafkaListeners struct {
	kafka, gateway    net.Listener
	gatewayAdvertised string
}

func (l kafkaListeners) close() {
	l.kafka.Close()
	l.gateway.Close()
}

// listenKafka binds the Kafka listener and the gateway, and sets
// cfg.KafkaAdvertise from the bound Kafka listener (its port is known only
// now when the flag asked for port 0).
func listenKafka(o *options, cfg *config.Config, inherited inheritedSockets) (kafkaListeners, error) {
	var l kafkaListeners
	kafkaAddr, gatewayAddr, err := kafkaListenAddresses(o)
	if err != nil {
		return l, err
	}
	if l.kafka, err = inherited.listen(kafkaAddr); err != nil {
		return l, fmt.Errorf("--kafka-listen: %w", err)
	}
	if l.gateway, err = inherited.listen(gatewayAddr); err != nil {
		l.kafka.Close()
		return l, fmt.Errorf("--kafka-gateway-listen: %w", err)
	}
	if cfg.KafkaAdvertise, err = kafkaAdvertisedAddress(o, l.kafka.Addr(), cfg.HTTPAdvertise); err == nil {
		l.gatewayAdvertised, err = gatewayAdvertisedAddress(o, l.gateway.Addr())
	}
	if err != nil {
		l.close()
		return l, err
	}
	return l, nil
}

// kafkaServers serve the Kafka listener and the gateway.
type kafkaServers struct {
	kafka, gateway *kafka.Server
}

// kafkaListenerSecurity is the TLS and the security of the Kafka listener
// and of the gateway.
type kafkaListenerSecurity struct {
	kafkaTLS, gatewayTLS *tls.Config
	kafka, gateway       auth.Listener
}

// kafkaSecurities reads the --kafka-* and --kafka-gateway-* security flags.
func kafkaSecurities(o *options) (kafkaListenerSecurity, error) {
	var sec kafkaListenerSecurity
	var err error
	if sec.kafkaTLS, sec.kafka, err = kafkaSecurity(o, "kafka", o.kafkaTLS, o.kafkaAuth); err != nil {
		return sec, err
	}
	sec.gatewayTLS, sec.gateway, err = kafkaSecurity(o, "kafka-gateway", o.gatewayTLS, o.gatewayAuth)
	return sec, err
}

func newKafkaServers(log *slog.Logger, b *core.Broker, cfg config.Config, l kafkaListeners, sec kafkaListenerSecurity) kafkaServers {
	s := cfg.Settings
	opts := kafka.Options{Logger: log, Core: b, NodeID: b.ID(), ClusterID: b.ClusterID, Memory: b.Memory().Requests,
		MaxRequestBytes: s.SocketRequestMaxBytes, IdleTimeout: s.ConnectionsMaxIdle, IOTimeout: s.ClientIOTimeout,
		Users: b.User}
	gw := opts
	gw.Logger = log.With("listener", "kafka-gateway")
	gw.Mode, gw.Advertised = kafka.Gateway, l.gatewayAdvertised
	gw.TLS, gw.Security = sec.gatewayTLS, sec.gateway
	opts.Logger = log.With("listener", "kafka")
	opts.Mode, opts.Advertised, opts.RequestContext = kafka.Direct, cfg.KafkaAdvertise, core.Local
	opts.TLS, opts.Security = sec.kafkaTLS, sec.kafka
	return kafkaServers{kafka: kafka.New(opts), gateway: kafka.New(gw)}
}

func (s kafkaServers) serve(l kafkaListeners, errs chan<- error) {
	go func() { errs <- fmt.Errorf("kafka listener: %w", s.kafka.Serve(l.kafka)) }()
	go func() { errs <- fmt.Errorf("kafka gateway listener: %w", s.gateway.Serve(l.gateway)) }()
}

func (s kafkaServers) close() {
	s.kafka.Close()
	s.gateway.Close()
}
