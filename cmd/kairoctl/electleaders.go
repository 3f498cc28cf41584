package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func topicsElectLeadersCmd(g *globals) *cobra.Command {
	var partitions []int32
	cmd := &cobra.Command{
		Use:   "elect-leaders NAME [--partitions 0,1]",
		Short: "Move a topic's leaderships back to their preferred replicas",
		Long: "Give the leadership of a topic's partitions (every partition without\n" +
			"--partitions) back to their preferred replicas, the first of each\n" +
			"partition's replicas, where those are alive and in sync, as\n" +
			"kafka-leader-election --election-type preferred does. Brokers do this on\n" +
			"their own unless auto.leader.rebalance.enable is false.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			answers, err := c.ElectLeaders(cmd.Context(), args[0], partitions)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Name       string               `json:"name"`
					Partitions []api.LeaderElection `json:"partitions"`
				}{args[0], answers})
			}
			rows := make([][]string, 0, len(answers))
			unavailable := 0
			for _, a := range answers {
				row := []string{itoa(a.Partition), "", a.Code}
				if a.Leader != nil {
					row[1] = itoa(*a.Leader)
				}
				if a.Code != "" && a.Code != api.CodeElectionNotNeeded {
					unavailable++
				}
				rows = append(rows, row)
			}
			if err := printTable(cmd.OutOrStdout(), []string{"PARTITION", "LEADER", "ERROR"}, rows); err != nil {
				return err
			}
			if unavailable > 0 {
				return fmt.Errorf("%d of %d partitions are not led by their preferred replica", unavailable, len(answers))
			}
			return nil
		},
	}
	cmd.Flags().Int32SliceVar(&partitions, "partitions", nil, "partitions (default: every one)")
	return cmd
}
