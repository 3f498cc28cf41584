package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func clusterCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Cluster metadata, brokers, draining and restarts"}
	cmd.AddCommand(clusterMetadataCmd(g), clusterBrokersCmd(g), clusterSafeCmd(g), clusterDrainCmd(g))
	return cmd
}

func clusterMetadataCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "metadata",
		Short: "Show the cluster id, controller, brokers and topics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			md, err := c.Metadata(cmd.Context())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), md)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Cluster: %s  Controller: %d  Brokers: %d  Topics: %d\n\n", md.ClusterID, md.ControllerID, len(md.Brokers), len(md.Topics))
			if err := printBrokers(w, md.Brokers); err != nil {
				return err
			}
			fmt.Fprintln(w)
			rows := [][]string{}
			for _, t := range md.Topics {
				for _, p := range t.Partitions {
					rows = append(rows, []string{t.Name, itoa(p.Partition), itoa(p.Leader), ints(p.Replicas), ints(p.ISR), itoa(p.HighWatermark), itoa(p.LogEndOffset)})
				}
			}
			return printTable(w, []string{"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "HW", "LEO"}, rows)
		},
	}
}

func printBrokers(w interface{ Write([]byte) (int, error) }, bs []api.BrokerInfo) error {
	rows := make([][]string, 0, len(bs))
	for _, b := range bs {
		rows = append(rows, []string{itoa(b.ID), b.Address, b.Rack, b.State, yesNo(b.Voter), itoa(b.Partitions), itoa(b.Leaders), itoa(b.UnderReplicated), yesNo(b.InSync)})
	}
	return printTable(w, []string{"ID", "ADDRESS", "RACK", "STATE", "VOTER", "PARTITIONS", "LEADERS", "UNDER-REPLICATED", "IN-SYNC"}, rows)
}

func clusterBrokersCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "brokers",
		Short: "List brokers with their partition and leader counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			bs, err := c.Brokers(cmd.Context())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Brokers []api.BrokerInfo `json:"brokers"`
				}{bs})
			}
			return printBrokers(cmd.OutOrStdout(), bs)
		},
	}
}

func brokerArg(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("broker id must be a non-negative integer, got %q", s)
	}
	return int32(n), nil
}

func clusterSafeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "safe-to-restart ID",
		Short: "Say whether stopping a broker now keeps every partition at min.insync.replicas",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := brokerArg(args[0])
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.SafeToRestart(cmd.Context(), id)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Broker %d safe to restart: %s\n", res.Broker, yesNo(res.Safe))
			for _, r := range res.Reasons {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", r)
			}
			return nil
		},
	}
}

func clusterDrainCmd(g *globals) *cobra.Command {
	var cancel bool
	cmd := &cobra.Command{
		Use:   "drain ID",
		Short: "Move every replica off a broker (or --cancel)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := brokerArg(args[0])
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if cancel {
				if err := c.CancelDrain(cmd.Context(), id); err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), brokerStatus{Status: "active", Broker: id})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Broker %d is active\n", id)
				return nil
			}
			remaining, err := c.Drain(cmd.Context(), id)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), brokerStatus{Status: "draining", Broker: id, RemainingReplicas: &remaining})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Broker %d is draining, %d replicas to move\n", id, remaining)
			return nil
		},
	}
	cmd.Flags().BoolVar(&cancel, "cancel", false, "stop draining and take replicas again")
	return cmd
}

// brokerStatus is what a change did to a broker, as the broker answers it.
type brokerStatus struct {
	Status            string `json:"status"`
	Broker            int32  `json:"broker"`
	RemainingReplicas *int   `json:"remaining_replicas,omitempty"`
}
