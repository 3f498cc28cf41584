package controllers

import (
	"crypto/x509"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// TestBrokerCertificatesKeptWhileValid: certificates issued by the signing
// CA, valid and far from expiry, are kept as they are. Before validLeaf
// matched the keys' Equal method, it found no certificate valid and every
// reconcile reissued all of them, restarting the brokers without end.
func TestBrokerCertificatesKeptWhileValid(t *testing.T) {
	now := time.Now()
	validity, renewBefore := 365*24*time.Hour, 30*24*time.Hour
	ca, err := pki.NewAuthority("test CA", now, now.Add(validity))
	if err != nil {
		t.Fatal(err)
	}
	kc := &kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kairo"}}
	first, reissued, _, err := brokerCertificates(kc, nil, 3, ca, nil, true, now, validity, renewBefore)
	if err != nil || reissued {
		t.Fatalf("first issue: reissued=%v err=%v", reissued, err)
	}
	for id := int32(0); id < 3; id++ {
		if validLeaf(first[resources.BrokerCertKey(kc, id)], first[resources.BrokerKeyKey(kc, id)], []*x509.Certificate{ca.Cert}, now,
			resources.BrokerDNSNames(kc, id)) == nil {
			t.Fatalf("broker %d: its fresh certificate is not valid", id)
		}
	}
	again, reissued, _, err := brokerCertificates(kc, first, 3, ca, []*x509.Certificate{ca.Cert}, true, now.Add(time.Hour), validity, renewBefore)
	if err != nil || reissued {
		t.Fatalf("second pass: reissued=%v err=%v", reissued, err)
	}
	for k, v := range first {
		if string(again[k]) != string(v) {
			t.Errorf("%s changed on a pass that had nothing to renew", k)
		}
	}
}
