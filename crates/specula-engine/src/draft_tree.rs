//! The draft set of one round, as a tree of draft tokens hanging off the committed
//! context.
//!
//! Every draft shape is a tree given by its branching per depth: speculative decoding
//! with γ drafts is (1, …, 1), K i.i.d. sequences of length L are (K, 1, …, 1), a SpecTr
//! prefix tree is (k₁, …, k_L), autoregressive decoding is the empty tree. Each node's
//! children are drawn i.i.d. from the draft conditional given the node's path.
//!
//! Nodes whose token paths are equal have equal conditionals, so each distinct *path* is
//! queried once (in the draft requests and in the one target request), while the nodes —
//! the separate i.i.d. draws, in draw order — stay distinct for selection.

use std::collections::HashMap;

use rand::Rng;
use specula_core::{Bug, Distribution, DraftDraw, draw_draft};

use crate::error::{Error, Result};
use crate::request::{ForwardRequest, Query, Role};

/// The root: the committed context, not a draft token.
pub(crate) const ROOT: usize = 0;

/// One draft token (or the root).
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The parent node (the root is its own parent).
    pub parent: usize,
    /// 0 for the root, else 1-based depth.
    pub depth: usize,
    /// The draft token (unused for the root).
    pub token: u32,
    /// The distinct token path this node ends.
    pub path: usize,
    /// The draft probability of `token` under the distribution it was drawn from.
    pub draft_prob: f64,
    /// The uniform that drew `token` (none for the root, or under the argmax-draft bug).
    pub uniform: Option<f64>,
    /// Children, in draw order.
    pub children: Vec<usize>,
}

/// A distinct token path below the context.
#[derive(Debug, Clone)]
pub(crate) struct Path {
    /// The draft tokens after the committed context.
    pub tokens: Vec<u32>,
    /// The draft conditional after this path, once the draft model has answered.
    pub draft: Option<Distribution>,
    /// What a buggy decoder tests the draws from `draft` against instead of `draft`
    /// itself (the filtered-draft bug); `None` when correct.
    pub tested: Option<Distribution>,
}

impl Path {
    /// The draft conditional the selection tests against: `draft`, unless a bug
    /// substituted another.
    pub(crate) fn tested_draft(&self) -> Option<&Distribution> {
        self.tested.as_ref().or(self.draft.as_ref())
    }
}

/// The draft set of one round.
#[derive(Debug, Clone)]
pub(crate) struct DraftTree {
    branching: Vec<usize>,
    pub nodes: Vec<Node>,
    pub paths: Vec<Path>,
    path_ids: HashMap<(usize, u32), usize>,
}

impl DraftTree {
    /// A tree with only the root; `branching[i]` children per node at depth `i`.
    pub(crate) fn new(branching: Vec<usize>) -> Self {
        Self {
            branching,
            nodes: vec![Node {
                parent: ROOT,
                depth: 0,
                token: 0,
                path: 0,
                draft_prob: 1.0,
                uniform: None,
                children: Vec::new(),
            }],
            paths: vec![Path {
                tokens: Vec::new(),
                draft: None,
                tested: None,
            }],
            path_ids: HashMap::new(),
        }
    }

    /// A chain of draft tokens proposed without a draft model (prompt lookup): one node
    /// per token, each its parent's only child. Their point-mass conditionals are set by
    /// [`set_point_masses`](Self::set_point_masses) once the vocabulary is known.
    pub(crate) fn chain(tokens: &[u32]) -> Self {
        let mut tree = Self::new(vec![1; tokens.len()]);
        let mut parent = ROOT;
        for (i, &token) in tokens.iter().enumerate() {
            let path = tree.path_id(tree.nodes[parent].path, token);
            let id = tree.nodes.len();
            tree.nodes.push(Node {
                parent,
                depth: i + 1,
                token,
                path,
                draft_prob: 1.0,
                uniform: None,
                children: Vec::new(),
            });
            tree.nodes[parent].children.push(id);
            parent = id;
        }
        tree
    }

    /// Gives every path of a [`chain`](Self::chain) above its leaf the point mass at its
    /// child's token over `vocab` tokens: the draft conditional of a proposal that is
    /// certain. Idempotent.
    ///
    /// # Errors
    /// [`Error::TokenOutOfRange`] for a token at or above `vocab` (the decoder checks the
    /// context against the vocabulary first, so never in practice).
    pub(crate) fn set_point_masses(&mut self, vocab: usize) -> Result<()> {
        for i in 1..self.nodes.len() {
            let (token, parent) = (self.nodes[i].token, self.nodes[i].parent);
            let parent_path = self.nodes[parent].path;
            let point = Distribution::one_hot(vocab, token as usize)
                .map_err(|_| Error::TokenOutOfRange { token, vocab })?;
            if let Some(path) = self.paths.get_mut(parent_path) {
                path.draft = Some(point);
            }
        }
        Ok(())
    }

    /// The draft length L of this round.
    pub(crate) fn depth(&self) -> usize {
        self.branching.len()
    }

    /// The branching per depth.
    pub(crate) fn branching(&self) -> &[usize] {
        &self.branching
    }

    /// The nodes at `depth`, in creation order.
    fn nodes_at(&self, depth: usize) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.depth == depth)
            .map(|(i, _)| i)
    }

    /// The distinct paths of the nodes at `depth`, in first-seen order.
    fn paths_at(&self, depth: usize) -> Vec<usize> {
        let mut seen = vec![false; self.paths.len()];
        let mut paths = Vec::new();
        for i in self.nodes_at(depth) {
            let path = self.nodes[i].path;
            if let Some(flag) = seen.get_mut(path)
                && !*flag
            {
                *flag = true;
                paths.push(path);
            }
        }
        paths
    }

    fn sequence(&self, context: &[u32], path: usize) -> Vec<u32> {
        let suffix = self
            .paths
            .get(path)
            .map_or(&[][..], |known| &known.tokens[..]);
        let mut seq = Vec::with_capacity(context.len() + suffix.len());
        seq.extend_from_slice(context);
        seq.extend_from_slice(suffix);
        seq
    }

    /// The draft request for the tokens at `depth` (1-based): one query per distinct
    /// path at `depth − 1`. Returns the request and the path of each query.
    pub(crate) fn draft_request(
        &self,
        depth: usize,
        context: &[u32],
    ) -> (ForwardRequest, Vec<usize>) {
        let paths = self.paths_at(depth.saturating_sub(1));
        let sequences: Vec<Vec<u32>> = paths
            .iter()
            .map(|&path| self.sequence(context, path))
            .collect();
        let queries = sequences
            .iter()
            .enumerate()
            .map(|(i, s)| Query {
                sequence: i,
                prefix_len: s.len(),
            })
            .collect();
        let request = ForwardRequest {
            role: Role::Draft,
            committed_len: context.len(),
            sequences,
            queries,
        };
        (request, paths)
    }

    /// Stores the draft conditionals of `paths` (as returned by [`draft_request`]), each
    /// with what a buggy decoder tests against instead, and draws `branching[depth − 1]`
    /// children for every node at `depth − 1` (as code with `bug` draws them).
    ///
    /// [`draft_request`]: Self::draft_request
    pub(crate) fn grow<R: Rng + ?Sized>(
        &mut self,
        depth: usize,
        paths: &[usize],
        conditionals: Vec<(Distribution, Option<Distribution>)>,
        bug: Option<Bug>,
        rng: &mut R,
    ) -> Result<()> {
        for (&id, (dist, tested)) in paths.iter().zip(conditionals) {
            if let Some(path) = self.paths.get_mut(id) {
                path.draft = Some(dist);
                path.tested = tested;
            }
        }
        let width = self
            .branching
            .get(depth.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        let parents: Vec<usize> = self.nodes_at(depth.saturating_sub(1)).collect();
        for parent in parents {
            let parent_path = self.nodes[parent].path;
            for _ in 0..width {
                let Some(dist) = self.paths[parent_path].draft.as_ref() else {
                    continue; // every queried path was answered; unreachable
                };
                let DraftDraw {
                    token: index,
                    uniform,
                } = draw_draft(bug, dist, rng);
                let draft_prob = dist.prob(index);
                let vocab = dist.len();
                let token = u32::try_from(index).map_err(|_| Error::TokenOutOfRange {
                    token: u32::MAX,
                    vocab,
                })?;
                let path = self.path_id(parent_path, token);
                let id = self.nodes.len();
                self.nodes.push(Node {
                    parent,
                    depth,
                    token,
                    path,
                    draft_prob,
                    uniform,
                    children: Vec::new(),
                });
                self.nodes[parent].children.push(id);
            }
        }
        Ok(())
    }

    /// The draft tokens of the deepest node created (for a chain, all of them in order).
    pub(crate) fn last_path_tokens(&self) -> &[u32] {
        self.nodes
            .last()
            .and_then(|node| self.paths.get(node.path))
            .map_or(&[][..], |path| &path.tokens[..])
    }

    /// For a chain (one child per node): its first draft token and the chain of the
    /// others, with the conditionals they were drawn from; `None` for an empty chain.
    pub(crate) fn split_first(&self) -> Option<(u32, Self)> {
        let first = self.nodes.get(1)?;
        let mut tree = Self::new(self.branching.get(1..).unwrap_or_default().to_vec());
        if let (Some(root), Some(old)) = (tree.paths.get_mut(ROOT), self.paths.get(first.path)) {
            root.draft.clone_from(&old.draft);
            root.tested.clone_from(&old.tested);
        }
        let mut parent = ROOT;
        for node in self.nodes.iter().skip(2) {
            let path = tree.path_id(tree.nodes[parent].path, node.token);
            if let (Some(new), Some(old)) = (tree.paths.get_mut(path), self.paths.get(node.path)) {
                new.draft.clone_from(&old.draft);
                new.tested.clone_from(&old.tested);
            }
            let id = tree.nodes.len();
            tree.nodes.push(Node {
                parent,
                depth: node.depth - 1,
                token: node.token,
                path,
                draft_prob: node.draft_prob,
                uniform: node.uniform,
                children: Vec::new(),
            });
            tree.nodes[parent].children.push(id);
            parent = id;
        }
        Some((first.token, tree))
    }

    fn path_id(&mut self, parent: usize, token: u32) -> usize {
        if let Some(&id) = self.path_ids.get(&(parent, token)) {
            return id;
        }
        let mut tokens = self.paths[parent].tokens.clone();
        tokens.push(token);
        let id = self.paths.len();
        self.paths.push(Path {
            tokens,
            draft: None,
            tested: None,
        });
        self.path_ids.insert((parent, token), id);
        id
    }

    /// The one target request of the round: a query for every distinct path (row `i` is
    /// path `i`), over the distinct deepest paths as sequences.
    pub(crate) fn target_request(&self, context: &[u32]) -> ForwardRequest {
        let leaves = self.paths_at(self.depth());
        let mut owner: Vec<Option<usize>> = vec![None; self.paths.len()];
        for (s, &leaf) in leaves.iter().enumerate() {
            // Walk up the leaf's path, claiming every prefix path not yet claimed.
            let tokens = &self.paths[leaf].tokens;
            let mut at = 0;
            owner[0].get_or_insert(s);
            for &t in tokens {
                match self.path_ids.get(&(at, t)) {
                    Some(&next) => {
                        at = next;
                        if let Some(o) = owner.get_mut(at) {
                            o.get_or_insert(s);
                        }
                    }
                    None => break,
                }
            }
        }
        let queries = owner
            .iter()
            .enumerate()
            .map(|(path, o)| Query {
                sequence: o.unwrap_or(0),
                prefix_len: context.len() + self.paths[path].tokens.len(),
            })
            .collect();
        let sequences = if leaves.is_empty() {
            vec![context.to_vec()]
        } else {
            leaves
                .iter()
                .map(|&leaf| self.sequence(context, leaf))
                .collect()
        };
        ForwardRequest {
            role: Role::Target,
            committed_len: context.len(),
            sequences,
            queries,
        }
    }
}
