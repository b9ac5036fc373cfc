package main

// The Kubernetes API server's validation of a PrometheusRule against the Prometheus Operator's
// CRD, with the API server's own packages (k8s.io/apiextensions-apiserver, the version Helm's
// module already pins): how it reads a CRD version's schema (customresource_handler.go:
// GetSchemaForVersion, the conversion to the internal types, NewStructural, NewSchemaValidator),
// what its decoder does to a created custom resource (unstructuredSchemaCoercer.apply: the
// metadata decoded as ObjectMeta, unknown fields pruned, metadata coerced) and what the
// custom-resource strategy's Validate checks on create (ValidateCustomResource against the
// schema, embedded ObjectMeta, x-kubernetes-list-type "map" and "set" keys, and the CEL rules
// of x-kubernetes-validations). The object's own name, namespace and labels are not held to
// the generic registry's ObjectMeta rules here, as rulegen's own check does not hold them.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdVersion is the version of the CRD rulegen checks against (rulegen/gitops/crd.py reads
// the same one), with its group and kind: an object of another apiVersion is not judged.
const crdVersion = "v1"

type crdSchema struct {
	apiVersion string // group/version, e.g. monitoring.coreos.com/v1
	kind       string
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator // nil: the schema has no x-kubernetes-validations
}

// loadCRD reads the CRD file at path (one YAML document) as the API server serves it.
func loadCRD(path string) (*crdSchema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if crd.Spec.PreserveUnknownFields {
		return nil, fmt.Errorf("%s: preserveUnknownFields is set: not a structural CRD", path)
	}
	val, err := apihelpers.GetSchemaForVersion(&crd, crdVersion)
	if err != nil || val == nil {
		return nil, fmt.Errorf("%s: no %s schema (%v)", path, crdVersion, err)
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &crdSchema{
		apiVersion: crd.Spec.Group + "/" + crdVersion,
		kind:       crd.Spec.Names.Kind,
		structural: s,
		validator:  validator,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}, nil
}

// admit is what the API server does with obj (a decoded custom resource, changed in place as
// the server changes it) on create: problems of the kind rulegen does not judge (fields the
// server would prune, metadata it cannot decode) in unknown, the schema's errors in invalid.
func (c *crdSchema) admit(obj map[string]interface{}) (unknown, invalid []string) {
	if _, _, paths, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: true,
	}); err != nil {
		return []string{"metadata: " + err.Error()}, nil
	} else if len(paths) > 0 {
		return prefixed("unknown field ", paths), nil
	}
	pruned := structuralpruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{
		TrackUnknownFieldPaths: true,
	})
	if len(pruned) > 0 {
		return prefixed("unknown field ", pruned), nil
	}
	if err, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, c.structural, false, schemaobjectmeta.CoerceOptions{
		ReturnUnknownFieldPaths: true,
	}); err != nil {
		return nil, []string{err.Error()}
	} else if len(paths) > 0 {
		return prefixed("unknown field ", paths), nil
	}
	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, c.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj, c.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	if c.cel != nil && len(errs) == 0 {
		celErrs, _ := c.cel.Validate(context.Background(), nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	for _, e := range errs {
		invalid = append(invalid, e.Error())
	}
	return nil, invalid
}

func prefixed(prefix string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = prefix + strings.TrimSpace(s)
	}
	return out
}
