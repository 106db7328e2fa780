// The canonical tree of a pi SessionManager, as the goldens record it (`*.tree.json`):
// depth-first pre-order over getTree(), iterative (trees can be 100k deep). Shared by
// pi-oracle.mjs (which writes the goldens) and tools/fuzz-pi/pi-worker.mjs (which compares
// arbor against pi live), so both answer in the one form.
//
// maxNodes: a walk that visits more nodes than that throws (the fuzzer's worker guards
// against trees that do not end); the oracle walks without a bound.
export function treeJson(sm, maxNodes = Infinity) {
	const roots = sm.getTree();
	const val = (v) => (v === undefined ? null : v);
	const isObj = (e) => e !== null && typeof e === "object" && !Array.isArray(e);
	const nodes = [];
	const stack = [];
	for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
	while (stack.length) {
		const n = stack.pop();
		const e = n.entry;
		const node = isObj(e)
			? { id: val(e.id), parentId: val(e.parentId), type: val(e.type), timestamp: val(e.timestamp) }
			: { id: null, parentId: null, type: null, timestamp: null, raw: e };
		if (n.label !== undefined) node.label = n.label;
		node.children = n.children.map((c) => (isObj(c.entry) ? val(c.entry.id) : null));
		nodes.push(node);
		if (nodes.length > maxNodes) throw new Error("tree walk did not end");
		for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
	}
	const leaf = sm.getLeafId();
	return { leaf: leaf === undefined ? null : leaf, roots: roots.map((n) => (isObj(n.entry) ? val(n.entry.id) : null)), nodes };
}
