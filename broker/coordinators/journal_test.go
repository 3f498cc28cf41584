package coordinators

import "testing"

func TestGroupPartitionIsJavaHashCode(t *testing.T) {
	// Java: "analytics-workers".hashCode() etc., reduced as Kafka does.
	cases := []struct {
		group string
		hash  int32
	}{
		{"", 0},
		{"a", 97},
		{"ab", 97*31 + 98},
		{"hello", 99162322},
		{"polygenelubricants", -2147483648}, // Integer.MIN_VALUE: Kafka's abs gives 0
	}
	for _, c := range cases {
		want := c.hash
		if want == -2147483648 {
			want = 0
		} else if want < 0 {
			want = -want
		}
		if got := Partition(c.group, 50); got != want%50 {
			t.Errorf("Partition(%q) = %d, want %d", c.group, got, want%50)
		}
	}
}
