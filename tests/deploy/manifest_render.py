"""A kustomization rendered without kustomize, for the fields deploy/ uses.

render(folder) loads every file `resources` lists (files only, no remote or
nested bases) and applies `namespace`, `labels` (metadata labels; with
includeSelectors also selectors and pod templates, as kustomize does) and
`images` (newName / newTag / digest by image name). A field it does not
implement raises RenderError naming it, so that a kustomization.yaml that
grows a patch or a generator fails the test instead of being half rendered.
"""

import copy
import os

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "labels", "images"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


class RenderError(Exception):
    pass


def selects(selector, labels):
    """Whether a matchLabels-style selector (a dict) selects `labels`."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _containers(obj):
    spec = obj.get("spec", {}).get("template", {}).get("spec", {})
    return spec.get("initContainers", []) + spec.get("containers", [])


def _set_image(container, images):
    image = container.get("image", "")
    name, tag = image, None
    if "@" in image:
        name, tag = image.split("@", 1)
        tag = "@" + tag
    elif ":" in image.rsplit("/", 1)[-1]:
        name, tag = image.rsplit(":", 1)
        tag = ":" + tag
    for rule in images:
        if rule.get("name") != name:
            continue
        new_name = rule.get("newName", name)
        if "digest" in rule:
            tag = "@" + rule["digest"]
        elif "newTag" in rule:
            tag = ":" + str(rule["newTag"])
        container["image"] = new_name + (tag or "")


def _add_labels(obj, pairs, include_selectors):
    obj.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
    if not include_selectors:
        return
    spec = obj.get("spec", {})
    if obj["kind"] in WORKLOADS:
        spec.setdefault("selector", {}).setdefault("matchLabels", {}).update(pairs)
        spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
    elif obj["kind"] == "Service":
        spec.setdefault("selector", {}).update(pairs)
    elif obj["kind"] in ("PodDisruptionBudget",):
        spec.setdefault("selector", {}).setdefault("matchLabels", {}).update(pairs)


def render(folder):
    """The objects of folder/kustomization.yaml, transformed. Raises RenderError."""
    path = os.path.join(folder, "kustomization.yaml")
    with open(path, encoding="utf-8") as f:
        k = yaml.safe_load(f) or {}
    unknown = sorted(set(k) - SUPPORTED)
    if unknown:
        raise RenderError("%s: %s not rendered by tests/deploy/manifest_render.py; extend it" % (path, ", ".join(unknown)))
    objects = []
    for resource in k.get("resources", []):
        file = os.path.join(folder, resource)
        if not os.path.isfile(file):
            raise RenderError("%s: resource %s is not a file in the folder" % (path, resource))
        with open(file, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    for field in ("apiVersion", "kind"):
                        if field not in doc:
                            raise RenderError("%s: a document without %s" % (resource, field))
                    if not doc.get("metadata", {}).get("name"):
                        raise RenderError("%s: a %s without metadata.name" % (resource, doc["kind"]))
                    objects.append(copy.deepcopy(doc))
    seen = set()
    for obj in objects:
        key = (obj["kind"], obj["metadata"]["name"])
        if key in seen:
            raise RenderError("%s: %s %s defined twice" % (path, *key))
        seen.add(key)
        if "namespace" in k:
            obj["metadata"]["namespace"] = k["namespace"]
        for entry in k.get("labels", []):
            _add_labels(obj, entry.get("pairs", {}), entry.get("includeSelectors", False))
        for container in _containers(obj):
            _set_image(container, k.get("images", []))
    return objects
