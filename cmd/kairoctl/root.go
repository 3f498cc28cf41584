package main

import (
	"fmt"
	"os"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/spf13/cobra"
)

// globals are the flags every command shares.
type globals struct {
	broker  string
	output  string
	timeout time.Duration
}

func (g *globals) client() (*client.Client, error) {
	return client.New(g.broker, client.WithTimeout(g.timeout), client.WithUserAgent("kairoctl"))
}

func (g *globals) json() bool { return g.output == "json" }

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "kairoctl",
		Short:         "Command line for KairoLog brokers",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.output != "table" && g.output != "json" {
				return fmt.Errorf("--output must be table or json, got %q", g.output)
			}
			return nil
		},
	}
	def := os.Getenv("KAIRO_BROKER")
	if def == "" {
		def = "http://localhost:8080"
	}
	root.PersistentFlags().StringVar(&g.broker, "broker", def, "broker address (env KAIRO_BROKER)")
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "table", "output format: table or json")
	root.PersistentFlags().DurationVar(&g.timeout, "timeout", 30*time.Second, "timeout of one request")
	root.AddCommand(topicsCmd(g), produceCmd(g), fetchCmd(g), consumeCmd(g), groupsCmd(g),
		clusterCmd(g), benchCmd(g), devCmd(g))
	return root
}
