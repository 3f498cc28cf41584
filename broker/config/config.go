// Package config is a broker's configuration: its identity, addresses and
// cluster secret (Config), and the broker-wide settings of a Kafka-style
// properties file (Settings, ParseProperties), each documented in
// docs/configuration.md. It only holds values; the packages that use a
// setting decide what it means.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/tlsconf"
)

// Config configures a broker (broker/core). cmd/broker fills it from
// flags, KAIRO_* variables and the --config-file properties.
type Config struct {
	// ID is the broker id (--id).
	ID int32
	// DataDir holds the partition logs and DataDir/metadata the raft state.
	DataDir string
	// HTTPAdvertise is the host:port clients use to reach this broker's
	// client (HTTP) listener (--advertised-address); the metadata shows it.
	HTTPAdvertise string
	// PeerAdvertise is the host:port other brokers reach this broker's peer
	// listener at (--peer-advertised-address): controller operations,
	// replica fetches, views and proxied client requests. The caller
	// serves PeerHandler there.
	PeerAdvertise string
	// KafkaAdvertise is the host:port Kafka clients reach this broker's
	// Kafka listener at (--kafka-advertised-address): Kafka's Metadata
	// names it to every client. Empty: the broker has no Kafka listener.
	KafkaAdvertise string
	// PeerSecret is the cluster secret every peer call carries and the
	// peer listener demands (--peer-secret-file). A broker alone in its
	// cluster (no other initial voter, nothing to join through) may leave
	// it unset: it then generates one that no other broker knows, so no
	// broker can join it. Every broker of a larger cluster needs the same
	// one.
	PeerSecret peer.Secret
	// PeerTLS is the mutual TLS between brokers, on the peer transport and
	// the raft transport alike (--peer-tls with the --tls-* files); nil is
	// plain. The cluster secret is checked over TLS too: a certificate
	// alone, even a broker's of a trusted CA, admits nobody.
	PeerTLS *tlsconf.Transport
	// RaftListen is the raft transport's listen address (--raft-listen);
	// RaftAdvertise the host:port peers dial (default: HTTPAdvertise's host
	// with RaftListen's port).
	RaftListen    string
	RaftAdvertise string
	// RaftListener, when set, is the raft transport's listener, already
	// bound: a caller that reserves its ports before starting brokers (the
	// in-process test clusters) hands it over so no other socket can take
	// the port in between. The broker closes it. RaftListen defaults to
	// its address.
	RaftListener net.Listener
	// InitialVoters form the metadata quorum at bootstrap; empty means a
	// one-voter cluster of this broker.
	InitialVoters []cluster.Voter
	// BootstrapServers are peer addresses to register through when this
	// broker is not an initial voter.
	BootstrapServers []string
	// Rack spreads replicas across failure domains.
	Rack string
	// Settings are the broker-wide configs (DefaultSettings when zero);
	// GivenSettings names those its properties file set.
	Settings      Settings
	GivenSettings []string
	// Logger receives the broker's logs; RaftLogOutput the raft library's.
	Logger        *slog.Logger
	RaftLogOutput io.Writer
	RaftLogLevel  string
	// Now is the clock of group membership (last-seen, stale members), so
	// tests can move time; nil is time.Now.
	Now func() time.Time
}

// SetDefaults fills in what c leaves unset and checks the rest; the
// broker calls it before it starts.
func (c *Config) SetDefaults() error {
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if c.HTTPAdvertise == "" {
		return fmt.Errorf("broker: the HTTP advertised address is required")
	}
	if c.PeerAdvertise == "" {
		return fmt.Errorf("broker: the peer advertised address is required")
	}
	if c.PeerSecret.IsZero() {
		if !c.alone() {
			return fmt.Errorf("broker: %w: a cluster of several brokers needs the same cluster secret on each (--peer-secret-file)", ErrNoPeerSecret)
		}
		c.PeerSecret = peer.GenerateSecret()
	}
	if c.RaftListen == "" && c.RaftListener != nil {
		c.RaftListen = c.RaftListener.Addr().String()
	}
	if c.RaftListen == "" {
		c.RaftListen = ":9093"
	}
	if c.Settings == (Settings{}) {
		c.Settings = DefaultSettings()
	}
	if err := c.Settings.validate(); err != nil {
		return err
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// ErrNoPeerSecret: the broker has peers but no cluster secret to prove
// itself to them with.
var ErrNoPeerSecret = errors.New("no cluster secret")

// alone reports whether the configuration names no other broker: no
// initial voter but this one and nothing to join through.
func (c *Config) alone() bool {
	if len(c.BootstrapServers) > 0 {
		return false
	}
	for _, v := range c.InitialVoters {
		if v.ID != int(c.ID) {
			return false
		}
	}
	return true
}
