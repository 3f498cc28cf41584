package nodeagent

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The node has no cluster DNS. Each pod instead gets its own /etc/hosts
// (bind-mounted in its mount namespace) holding what CoreDNS would answer
// for it: Service names to ClusterIPs, headless Service names and
// <hostname>.<subdomain> names to pod IPs, with the short forms a resolver
// search path would complete for the pod's namespace. The file is rewritten
// in place as pods and Services change.

// podHostname is the host name the kubelet gives a pod.
func podHostname(p *corev1.Pod) string {
	h := p.Spec.Hostname
	if h == "" {
		h = p.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// nameForms returns the names a pod in namespace from can use for the
// in-cluster name "<prefix>.<ns>": the FQDN and what the search path
// "<from>.svc.<domain> svc.<domain> <domain>" would complete.
func nameForms(prefix, ns, from, domain string) []string {
	names := []string{
		prefix + "." + ns + ".svc." + domain,
		prefix + "." + ns + ".svc",
		prefix + "." + ns,
	}
	if ns == from {
		names = append(names, prefix)
	}
	return names
}

// renderHosts builds the hosts file of pod self (whose address is selfIP)
// from the pods and Services the cluster has.
func renderHosts(self *corev1.Pod, selfIP string, pods []*corev1.Pod, svcs []*corev1.Service, domain string) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file (kairo-local node: stands in for cluster DNS).\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	host := podHostname(self)
	if self.Spec.Subdomain != "" {
		fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", selfIP, host, self.Spec.Subdomain, self.Namespace, domain, host)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", selfIP, host)
	}

	type record struct {
		ip    string
		names []string
	}
	var records []record
	for _, svc := range svcs {
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			continue // a CNAME has no hosts-file form
		case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
			records = append(records, record{svc.Spec.ClusterIP, nameForms(svc.Name, svc.Namespace, self.Namespace, domain)})
		case svc.Spec.ClusterIP == corev1.ClusterIPNone:
			for _, ep := range serviceEndpoints(svc, pods) {
				if !ep.publishable(svc) {
					continue
				}
				records = append(records, record{ep.ip, nameForms(svc.Name, svc.Namespace, self.Namespace, domain)})
				if ep.pod.Spec.Hostname != "" && ep.pod.Spec.Subdomain == svc.Name {
					prefix := ep.pod.Spec.Hostname + "." + svc.Name
					records = append(records, record{ep.ip, nameForms(prefix, svc.Namespace, self.Namespace, domain)})
				}
			}
		}
	}
	sort.SliceStable(records, func(i, j int) bool { return records[i].names[0] < records[j].names[0] })
	if len(records) > 0 {
		b.WriteString("\n# Cluster names, as cluster DNS would answer them.\n")
	}
	for _, r := range records {
		fmt.Fprintf(&b, "%s\t%s\n", r.ip, strings.Join(r.names, " "))
	}
	return b.Bytes()
}

// renderResolvConf gives pods a resolver that answers "no such host" at
// once for anything the hosts file does not know: the name server is the
// node's address, where nothing listens on port 53, so a query is refused
// immediately instead of timing out.
func renderResolvConf(nameserver, namespace, domain string) []byte {
	return fmt.Appendf(nil, "nameserver %s\nsearch %s.svc.%s svc.%s %s\noptions ndots:5 timeout:1 attempts:1\n",
		nameserver, namespace, domain, domain, domain)
}

// rewriteInPlace replaces the content of path without replacing the file:
// the file is bind-mounted into running pods, and a rename would leave them
// looking at the old inode.
func rewriteInPlace(path string, data []byte) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	defer f.Close()
	// Write first, then cut: a reader racing us sees the new content
	// followed at worst by a stale tail, never an empty file.
	if _, err := f.WriteAt(data, 0); err != nil {
		return false, err
	}
	return true, f.Truncate(int64(len(data)))
}
