package localcluster

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context in every kubeconfig this
// package writes, so a user's `kubectl config get-contexts` says where it is.
const contextName = "kairo-local"

// credentials are what one client presents to kube-apiserver.
type credentials struct {
	server string
	caPEM  []byte
	client keyPair
}

// writeKubeconfig writes a self-contained kubeconfig (certificates embedded)
// for creds to path.
func writeKubeconfig(path string, creds credentials) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   creds.server,
		CertificateAuthorityData: creds.caPEM,
	}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: creds.client.certPEM,
		ClientKeyData:         creds.client.keyPEM,
	}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	return clientcmd.WriteToFile(*cfg, path)
}

// restConfig is the in-process equivalent of writeKubeconfig.
func restConfig(creds credentials) *rest.Config {
	return &rest.Config{
		Host: creds.server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   creds.caPEM,
			CertData: creds.client.certPEM,
			KeyData:  creds.client.keyPEM,
		},
		QPS:   50,
		Burst: 100,
	}
}
