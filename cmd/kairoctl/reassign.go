package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func topicsReassignCmd(g *globals) *cobra.Command {
	var (
		partitions []int32
		replicas   []int32
		cancel     bool
	)
	cmd := &cobra.Command{
		Use:   "reassign NAME --partitions 0,1 (--replicas 2,0 | --cancel)",
		Short: "Move partitions to other brokers, or undo a move in progress",
		Long: "Give the partitions named new replicas, in preference order (the first leads),\n" +
			"as kafka-reassign-partitions --execute does: the added replicas catch up and\n" +
			"join the ISR, and only then do the others leave; 'topics describe' shows the\n" +
			"progress (adding, removing). --cancel undoes a move in progress.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(partitions) == 0 || cancel == (len(replicas) > 0) {
				return errors.New("--partitions and one of --replicas or --cancel are required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			req := make([]api.PartitionReassignment, len(partitions))
			for i, p := range partitions {
				req[i] = api.PartitionReassignment{Partition: p, Replicas: replicas, Cancel: cancel}
			}
			answers, err := c.ReassignPartitions(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Name       string                   `json:"name"`
					Partitions []api.ReassignmentAnswer `json:"partitions"`
				}{args[0], answers})
			}
			rows := make([][]string, 0, len(answers))
			failed := 0
			for _, a := range answers {
				row := []string{itoa(a.Partition), ints(a.Replicas), ints(a.Adding), ints(a.Removing), a.Code}
				if a.Code != "" {
					failed++
				}
				rows = append(rows, row)
			}
			if err := printTable(cmd.OutOrStdout(), []string{"PARTITION", "REPLICAS", "ADDING", "REMOVING", "ERROR"}, rows); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d partitions kept their replicas", failed, len(answers))
			}
			return nil
		},
	}
	cmd.Flags().Int32SliceVar(&partitions, "partitions", nil, "partitions to move")
	cmd.Flags().Int32SliceVar(&replicas, "replicas", nil, "their new replicas, the preferred leader first")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "undo the moves in progress instead")
	return cmd
}
