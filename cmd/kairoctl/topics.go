package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
)

func topicsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "topics", Short: "Create, list, describe, alter and delete topics"}
	cmd.AddCommand(topicsCreateCmd(g), topicsListCmd(g), topicsDescribeCmd(g), topicsDeleteCmd(g), topicsAlterCmd(g),
		topicsDeleteRecordsCmd(g), topicsElectLeadersCmd(g), topicsReassignCmd(g))
	return cmd
}

// parseConfigs turns repeated key=value flags into a map.
func parseConfigs(kvs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("config %q is not key=value", kv)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func topicsCreateCmd(g *globals) *cobra.Command {
	var partitions int32
	var rf int16
	var configs []string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			cfg, err := parseConfigs(configs)
			if err != nil {
				return err
			}
			resp, err := c.CreateTopic(cmd.Context(), api.CreateTopicRequest{Name: args[0], Partitions: partitions, ReplicationFactor: rf, Config: cfg})
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), resp)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created topic %s (id %s) with %d partitions, replication factor %d\n",
				resp.Name, resp.TopicID, resp.Partitions, resp.ReplicationFactor)
			return nil
		},
	}
	cmd.Flags().Int32VarP(&partitions, "partitions", "p", 0, "partitions (default: the broker's num.partitions)")
	cmd.Flags().Int16VarP(&rf, "replication-factor", "r", 0, "replicas per partition (default: the broker's default.replication.factor)")
	cmd.Flags().StringArrayVarP(&configs, "config", "c", nil, "topic config key=value (repeatable)")
	return cmd
}

func topicsListCmd(g *globals) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if g.json() {
				names, err := c.ListTopics(cmd.Context(), internal)
				if err != nil {
					return err
				}
				return printJSON(cmd.OutOrStdout(), struct {
					Topics []string `json:"topics"`
				}{names})
			}
			md, err := c.Metadata(cmd.Context())
			if err != nil {
				return err
			}
			rows := [][]string{}
			for _, t := range md.Topics {
				if t.Internal && !internal {
					continue
				}
				under := 0
				for _, p := range t.Partitions {
					if p.UnderReplicated {
						under++
					}
				}
				rows = append(rows, []string{t.Name, itoa(t.PartitionCount), itoa(t.ReplicationFactor), itoa(under), t.TopicID})
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
			return printTable(cmd.OutOrStdout(), []string{"NAME", "PARTITIONS", "REPLICAS", "UNDER-REPLICATED", "ID"}, rows)
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal topics (__consumer_offsets)")
	return cmd
}

func topicsDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Describe a topic's partitions: leader, replicas, ISR, offsets",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			d, err := c.DescribeTopic(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), d)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Topic: %s  ID: %s  Partitions: %d  Replication factor: %d\n", d.Name, d.TopicID, d.PartitionCount, d.ReplicationFactor)
			if len(d.Config) > 0 {
				keys := make([]string, 0, len(d.Config))
				for k := range d.Config {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				parts := make([]string, len(keys))
				for i, k := range keys {
					parts[i] = k + "=" + d.Config[k]
				}
				fmt.Fprintf(w, "Config: %s\n", strings.Join(parts, " "))
			}
			rows := make([][]string, 0, len(d.Partitions))
			for _, p := range d.Partitions {
				rows = append(rows, []string{itoa(p.Partition), itoa(p.Leader), itoa(p.LeaderEpoch), ints(p.Replicas), ints(p.ISR),
					itoa(p.LogStartOffset), itoa(p.HighWatermark), itoa(p.LogEndOffset), itoa(p.SizeBytes), yesNo(p.UnderReplicated)})
			}
			return printTable(w, []string{"PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "START", "HW", "LEO", "BYTES", "UNDER-REPLICATED"}, rows)
		},
	}
}

func topicsDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a topic and its data",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.DeleteTopic(cmd.Context(), args[0]); err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), struct {
					Status string `json:"status"`
					Name   string `json:"name"`
				}{"deleted", args[0]})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted topic %s\n", args[0])
			return nil
		},
	}
}

func topicsAlterCmd(g *globals) *cobra.Command {
	var partitions int32
	var rf int16
	var set, remove []string
	var replace bool
	cmd := &cobra.Command{
		Use:   "alter NAME",
		Short: "Add partitions, change the replication factor or change config overrides",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			ctx, name, w := cmd.Context(), args[0], cmd.OutOrStdout()
			did := false
			if partitions > 0 {
				if err := c.AddPartitions(ctx, name, partitions); err != nil {
					return err
				}
				fmt.Fprintf(w, "Topic %s now has %d partitions\n", name, partitions)
				did = true
			}
			if rf > 0 {
				if err := c.SetReplicationFactor(ctx, name, rf); err != nil {
					return err
				}
				fmt.Fprintf(w, "Topic %s is moving to replication factor %d\n", name, rf)
				did = true
			}
			if len(set) > 0 || len(remove) > 0 || replace {
				cfg, err := parseConfigs(set)
				if err != nil {
					return err
				}
				var overrides map[string]string
				if replace {
					if len(remove) > 0 {
						return fmt.Errorf("--replace-config already drops every key not given; --delete-config is not needed")
					}
					overrides, err = c.SetTopicConfig(ctx, name, cfg)
				} else {
					patch := map[string]*string{}
					for k, v := range cfg {
						patch[k] = &v
					}
					for _, k := range remove {
						patch[k] = nil
					}
					overrides, err = c.PatchTopicConfig(ctx, name, patch)
				}
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(w, struct {
						Status string            `json:"status"`
						Name   string            `json:"name"`
						Config map[string]string `json:"config"`
					}{"updated", name, overrides})
				}
				fmt.Fprintf(w, "Topic %s config: %v\n", name, overrides)
				did = true
			}
			if !did {
				return fmt.Errorf("nothing to change: give --partitions, --replication-factor, --config or --delete-config")
			}
			return nil
		},
	}
	cmd.Flags().Int32VarP(&partitions, "partitions", "p", 0, "new (larger) partition count")
	cmd.Flags().Int16VarP(&rf, "replication-factor", "r", 0, "new replication factor")
	cmd.Flags().StringArrayVarP(&set, "config", "c", nil, "set a config override key=value (repeatable)")
	cmd.Flags().StringArrayVar(&remove, "delete-config", nil, "remove a config override (repeatable)")
	cmd.Flags().BoolVar(&replace, "replace-config", false, "make --config the whole set of overrides")
	return cmd
}
