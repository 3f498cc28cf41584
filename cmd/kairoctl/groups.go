package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func groupsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "groups", Short: "List, describe, reset and delete consumer groups"}
	cmd.AddCommand(groupsListCmd(g), groupsDescribeCmd(g), groupsResetCmd(g), groupsDeleteOffsetsCmd(g), groupsDeleteCmd(g))
	return cmd
}

func groupsListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List consumer groups",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			gl, err := c.GroupList(cmd.Context())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), gl)
			}
			if gl.Partial {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: partial list: the groups of brokers %v are missing (not answering, or still loading)\n", gl.UnavailableBrokers)
			}
			rows := make([][]string, 0, len(gl.Groups))
			for _, s := range gl.Groups {
				rows = append(rows, []string{s.Group, s.State, itoa(s.Generation), itoa(s.Members)})
			}
			return printTable(cmd.OutOrStdout(), []string{"GROUP", "STATE", "GENERATION", "MEMBERS"}, rows)
		},
	}
}

func groupsDescribeCmd(g *globals) *cobra.Command {
	var topics []string
	cmd := &cobra.Command{
		Use:   "describe GROUP",
		Short: "Describe a group: state, members, assignment, committed offsets and lag",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			d, err := c.DescribeGroup(cmd.Context(), args[0], topics...)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), d)
			}
			w := cmd.OutOrStdout()
			// Kafka consumers are assigned by their leader, with the
			// protocol their generation chose, not by the group's strategy.
			strategy := d.AssignmentStrategy
			if d.ProtocolType != "" {
				strategy = fmt.Sprintf("%s (%s protocol, assigned by the leader)", d.Protocol, d.ProtocolType)
			}
			fmt.Fprintf(w, "Group: %s  State: %s  Generation: %d  Strategy: %s  Session timeout: %dms  Leader: %s  Total lag: %d\n\n",
				d.Group, d.State, d.Generation, strategy, d.SessionTimeoutMs, d.Leader, d.TotalLag)
			rows := make([][]string, 0, len(d.Members))
			for _, m := range d.Members {
				parts := make([]string, 0, len(m.Assignment))
				for _, tp := range m.Assignment {
					parts = append(parts, tp.Topic+":"+ints(tp.Partitions))
				}
				rows = append(rows, []string{m.ID, m.ClientID, m.LastSeen.UTC().Format(time.RFC3339), strings.Join(m.Topics, ","), strings.Join(parts, " ")})
			}
			if err := printTable(w, []string{"MEMBER", "CLIENT", "LAST-SEEN", "TOPICS", "ASSIGNMENT"}, rows); err != nil {
				return err
			}
			fmt.Fprintln(w)
			rows = rows[:0]
			for _, o := range d.Offsets {
				committed := itoa(o.CommittedOffset)
				if o.CommittedOffset < 0 {
					committed = "-"
				}
				rows = append(rows, []string{o.Topic, itoa(o.Partition), committed, itoa(o.HighWatermark), itoa(o.Lag)})
			}
			return printTable(w, []string{"TOPIC", "PARTITION", "COMMITTED", "HW", "LAG"}, rows)
		},
	}
	cmd.Flags().StringSliceVar(&topics, "topics", nil, "also show partitions of these topics with nothing committed")
	return cmd
}

func groupsResetCmd(g *globals) *cobra.Command {
	var (
		toEarliest, toLatest bool
		toOffset, toTime     int64
		topics               []string
	)
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP --topics T1,T2 (--to-earliest | --to-latest | --to-offset N | --to-timestamp MS)",
		Short: "Move an empty group's committed offsets",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := api.ResetOffsetsRequest{Group: args[0], Topics: topics}
			n := 0
			if toEarliest {
				req.To, n = api.ResetEarliest, n+1
			}
			if toLatest {
				req.To, n = api.ResetLatest, n+1
			}
			if cmd.Flags().Changed("to-offset") {
				req.To, req.Offset, n = api.ResetOffset, &toOffset, n+1
			}
			if cmd.Flags().Changed("to-timestamp") {
				req.To, req.Timestamp, n = api.ResetTimestamp, &toTime, n+1
			}
			if n != 1 {
				return errors.New("give exactly one of --to-earliest, --to-latest, --to-offset, --to-timestamp")
			}
			if len(topics) == 0 {
				return errors.New("--topics is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			offsets, err := c.ResetOffsets(cmd.Context(), req)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Group   string                `json:"group"`
					Offsets []api.PartitionOffset `json:"offsets"`
				}{args[0], offsets})
			}
			rows := make([][]string, 0, len(offsets))
			for _, o := range offsets {
				rows = append(rows, []string{o.Topic, itoa(o.Partition), itoa(o.Offset)})
			}
			return printTable(cmd.OutOrStdout(), []string{"TOPIC", "PARTITION", "NEW-OFFSET"}, rows)
		},
	}
	cmd.Flags().BoolVar(&toEarliest, "to-earliest", false, "reset to each partition's log start")
	cmd.Flags().BoolVar(&toLatest, "to-latest", false, "reset to each partition's high watermark")
	cmd.Flags().Int64Var(&toOffset, "to-offset", 0, "reset to this offset (clamped to each partition's range)")
	cmd.Flags().Int64Var(&toTime, "to-timestamp", 0, "reset to the first record at or after this Unix time in ms")
	cmd.Flags().StringSliceVar(&topics, "topics", nil, "topics to reset")
	return cmd
}

func groupsDeleteOffsetsCmd(g *globals) *cobra.Command {
	var (
		topic      string
		partitions []int32
	)
	cmd := &cobra.Command{
		Use:   "delete-offsets GROUP --topic T [--partitions 0,1]",
		Short: "Delete a group's committed offsets of a topic it no longer consumes",
		Long: "Delete a group's committed offsets of a topic's partitions, every one the group\n" +
			"committed without --partitions (as kafka-consumer-groups --delete-offsets).\n" +
			"A topic a member of the group consumes keeps its offsets.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if topic == "" {
				return errors.New("--topic is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var tps []api.TopicPartition
			for _, p := range partitions {
				tps = append(tps, api.TopicPartition{Topic: topic, Partition: p})
			}
			if len(partitions) == 0 {
				committed, err := c.GroupOffsets(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				for _, o := range committed {
					if o.Topic == topic {
						tps = append(tps, api.TopicPartition{Topic: topic, Partition: o.Partition})
					}
				}
				if len(tps) == 0 {
					return fmt.Errorf("group %q has no committed offsets of topic %q", args[0], topic)
				}
			}
			answers, err := c.DeleteOffsets(cmd.Context(), args[0], tps)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Group      string               `json:"group"`
					Partitions []api.OffsetDeletion `json:"partitions"`
				}{args[0], answers})
			}
			rows := make([][]string, 0, len(answers))
			kept := 0
			for _, a := range answers {
				result := "deleted"
				if !a.Deleted {
					result, kept = a.Code, kept+1
				}
				rows = append(rows, []string{a.Topic, itoa(a.Partition), result})
			}
			if err := printTable(cmd.OutOrStdout(), []string{"TOPIC", "PARTITION", "RESULT"}, rows); err != nil {
				return err
			}
			if kept > 0 {
				return fmt.Errorf("%d of %d offsets kept", kept, len(answers))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "topic whose offsets to delete")
	cmd.Flags().Int32SliceVar(&partitions, "partitions", nil, "partitions (default: every one the group committed)")
	return cmd
}

func groupsDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP",
		Short: "Delete an empty group's offsets and saved state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.DeleteGroup(cmd.Context(), args[0]); err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Status string `json:"status"`
					Group  string `json:"group"`
				}{"deleted", args[0]})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted group %s\n", args[0])
			return nil
		},
	}
}
