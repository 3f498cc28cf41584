package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func topicsDeleteRecordsCmd(g *globals) *cobra.Command {
	var (
		before     int64
		partitions []int32
	)
	cmd := &cobra.Command{
		Use:   "delete-records NAME --before OFFSET [--partitions 0,1]",
		Short: "Delete a topic's oldest records, below an offset",
		Long: "Delete the records of a topic's partitions below --before (-1: every committed\n" +
			"record), every partition without --partitions, as kafka-delete-records does.\n" +
			"Each partition's log start moves there on every in-sync replica.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("before") {
				return errors.New("--before is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if len(partitions) == 0 {
				d, err := c.DescribeTopic(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				for _, p := range d.Partitions {
					partitions = append(partitions, p.Partition)
				}
			}
			req := make([]api.PartitionRecordsDeletion, len(partitions))
			for i, p := range partitions {
				req[i] = api.PartitionRecordsDeletion{Partition: p, Offset: before}
			}
			answers, err := c.DeleteRecords(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Name       string                `json:"name"`
					Partitions []api.RecordsDeletion `json:"partitions"`
				}{args[0], answers})
			}
			rows := make([][]string, 0, len(answers))
			failed := 0
			for _, a := range answers {
				row := []string{itoa(a.Partition), "", ""}
				if a.LowWatermark != nil {
					row[1] = fmt.Sprint(*a.LowWatermark)
				} else {
					row[2], failed = a.Code, failed+1
				}
				rows = append(rows, row)
			}
			if err := printTable(cmd.OutOrStdout(), []string{"PARTITION", "LOW-WATERMARK", "ERROR"}, rows); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d partitions kept their records", failed, len(answers))
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&before, "before", 0, "delete the records below this offset (-1: the high watermark)")
	cmd.Flags().Int32SliceVar(&partitions, "partitions", nil, "partitions (default: every one)")
	return cmd
}
