package main

import (
	"fmt"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/spf13/cobra"
)

func fetchCmd(g *globals) *cobra.Command {
	var (
		partition  int32
		offset     int64
		maxRecords int
		waitMs     int
	)
	cmd := &cobra.Command{
		Use:   "fetch TOPIC",
		Short: "Read records of one partition from an offset",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			resp, err := c.Fetch(cmd.Context(), client.FetchRequest{Topic: args[0], Partition: partition,
				Offset: offset, MaxRecords: maxRecords, WaitMs: waitMs})
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), resp)
			}
			rows := make([][]string, 0, len(resp.Records))
			for _, r := range resp.Records {
				key := ""
				if r.Key != nil {
					key = *r.Key
				}
				rows = append(rows, []string{itoa(r.Offset), key, r.Message})
			}
			if err := printTable(cmd.OutOrStdout(), []string{"OFFSET", "KEY", "MESSAGE"}, rows); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "partition %d: %d records, next offset %d, high watermark %d, log start %d\n",
				resp.Partition, len(resp.Records), resp.NextOffset, resp.HighWatermark, resp.LogStartOffset)
			return nil
		},
	}
	cmd.Flags().Int32VarP(&partition, "partition", "p", 0, "partition")
	cmd.Flags().Int64Var(&offset, "offset", -1, "first offset (default: the log start)")
	cmd.Flags().IntVarP(&maxRecords, "max-records", "n", 0, "most records to return (default 500)")
	cmd.Flags().IntVar(&waitMs, "wait-ms", 0, "wait up to this long for a record")
	return cmd
}
