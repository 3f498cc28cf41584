package broker

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/kairolog/kairolog/broker/cluster"
)

// Config configures a Broker. cmd/broker fills it from flags, KAIRO_*
// variables and the --config-file properties.
type Config struct {
	// ID is the broker id (--id).
	ID int32
	// DataDir holds the partition logs and DataDir/metadata the raft state.
	DataDir string
	// HTTPAdvertise is the host:port other brokers and proxies use to reach
	// this broker's HTTP listener (--advertised-address).
	HTTPAdvertise string
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
	// BootstrapServers are HTTP addresses to register through when this
	// broker is not an initial voter.
	BootstrapServers []string
	// Rack spreads replicas across failure domains.
	Rack string
	// Settings are the broker-wide configs (DefaultSettings when zero).
	Settings Settings
	// Logger receives the broker's logs; RaftLogOutput the raft library's.
	Logger        *slog.Logger
	RaftLogOutput io.Writer
	RaftLogLevel  string
	// Now is the clock of group membership (last-seen, stale members), so
	// tests can move time; nil is time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() error {
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if c.HTTPAdvertise == "" {
		return fmt.Errorf("broker: the HTTP advertised address is required")
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
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}
