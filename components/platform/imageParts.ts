/** An image reference split the way the charts take it: registry, repository, tag and the digest's hex (if pinned). */
export function imageParts(ref: string) {
    const m = /^([a-z0-9.-]+(?::\d+)?)\/([a-z0-9._/-]+):([\w][\w.-]*)(?:@sha256:([0-9a-f]{64}))?$/.exec(ref);
    if (!m) throw new Error(`${ref}: expected registry/repository:tag[@sha256:<64 hex>]`);
    const [, registry, repository, tag, sha] = m;
    return { registry, repository, tag, sha: sha ?? "", tagWithDigest: sha ? `${tag}@sha256:${sha}` : tag };
}
