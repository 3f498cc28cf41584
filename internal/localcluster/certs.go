package localcluster

import (
	"net"
	"os"
	"path/filepath"
)

// Identities of the clients this package creates. The controller-manager and
// scheduler users and the system:nodes group are the ones the bootstrap RBAC
// policy of kube-apiserver already grants; the kubelet-client name is what
// the node agent's API server accepts.
const (
	adminUser            = "kairo-local-admin"
	controllerManagerCN  = "system:kube-controller-manager"
	schedulerCN          = "system:kube-scheduler"
	apiserverKubeletCN   = "kube-apiserver-kubelet-client"
	provisionerUser      = "kairo-local:directory-provisioner"
	frontProxyClientCN   = "front-proxy-client"
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
)

// clusterPKI is every certificate and key of one cluster, on disk under
// <state>/pki and in memory for the in-process clients.
type clusterPKI struct {
	dir string
	ca  *authority

	caPath                              string
	frontProxyCAPath                    string
	frontProxyCert, frontProxyKey       string
	apiserverCert, apiserverKey         string
	kubeletClientCert, kubeletClientKey string
	saPrivate, saPublic                 string

	admin, controllerManager, scheduler, provisioner, node keyPair
	kubeletServing                                         keyPair
}

// newClusterPKI creates the CA and every leaf certificate. nodeName and
// nodeIP identify the node agent; serviceIP is the default/kubernetes
// Service address in-cluster clients use.
func newClusterPKI(dir, nodeName string, nodeIP, serviceIP net.IP) (*clusterPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newAuthority("kairo-local-ca")
	if err != nil {
		return nil, err
	}
	p := &clusterPKI{dir: dir, ca: ca, caPath: filepath.Join(dir, "ca.crt")}
	if err := os.WriteFile(p.caPath, ca.certPEM, 0o644); err != nil {
		return nil, err
	}

	apiserver, err := ca.issue(certSpec{
		commonName: "kube-apiserver",
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		ips:    []net.IP{net.IPv4(127, 0, 0, 1), nodeIP, serviceIP},
		server: true,
	})
	if err != nil {
		return nil, err
	}
	if p.apiserverCert, p.apiserverKey, err = apiserver.write(dir, "apiserver"); err != nil {
		return nil, err
	}
	// The front-proxy CA authenticates kube-apiserver to aggregated API
	// servers; the controller-manager and scheduler read it too and
	// complain without it.
	frontCA, err := newAuthority("kairo-local-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	p.frontProxyCAPath = filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(p.frontProxyCAPath, frontCA.certPEM, 0o644); err != nil {
		return nil, err
	}
	frontClient, err := frontCA.issue(certSpec{commonName: frontProxyClientCN, client: true})
	if err != nil {
		return nil, err
	}
	if p.frontProxyCert, p.frontProxyKey, err = frontClient.write(dir, "front-proxy-client"); err != nil {
		return nil, err
	}

	kubeletClient, err := ca.issue(certSpec{commonName: apiserverKubeletCN, client: true})
	if err != nil {
		return nil, err
	}
	if p.kubeletClientCert, p.kubeletClientKey, err = kubeletClient.write(dir, "apiserver-kubelet-client"); err != nil {
		return nil, err
	}

	clients := []struct {
		out  *keyPair
		spec certSpec
	}{
		{&p.admin, certSpec{commonName: adminUser, organizations: []string{"system:masters"}, client: true}},
		{&p.controllerManager, certSpec{commonName: controllerManagerCN, client: true}},
		{&p.scheduler, certSpec{commonName: schedulerCN, client: true}},
		{&p.provisioner, certSpec{commonName: provisionerUser, client: true}},
		{&p.node, certSpec{commonName: "system:node:" + nodeName, organizations: []string{"system:nodes"}, client: true}},
		{&p.kubeletServing, certSpec{commonName: nodeName, dnsNames: []string{nodeName, "localhost"},
			ips: []net.IP{nodeIP}, server: true}},
	}
	for _, c := range clients {
		if *c.out, err = ca.issue(c.spec); err != nil {
			return nil, err
		}
	}

	priv, pub, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	p.saPrivate = filepath.Join(dir, "sa.key")
	p.saPublic = filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(p.saPrivate, priv, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.saPublic, pub, 0o644); err != nil {
		return nil, err
	}
	return p, nil
}
