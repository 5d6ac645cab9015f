#!/usr/bin/env python3
"""Run tesselctl's deepspeed and galvatron exports through the stacks' own readers.

DeepSpeed's DeepSpeedConfig (its pydantic ZeRO config, the batch assertion), for a
plan with TP beside stages bigscience-workshop/Megatron-DeepSpeed's parse_args of
the launch arguments the export carries ("megatron_deepspeed"), and
Hetu-Galvatron's get_hybrid_parallel_configs_api / check_hp_config /
hp_config_whole_model take each export of a spread of plans, at the world size they
would see; then what they read is compared with the plan where the engine is known to
run otherwise than the file says (docs/exports.md "Checked against the stacks").

Nothing is installed or kept: each stack's Python package is taken out of a bare git
mirror (git archive) into a temporary directory and imported from there with torch,
numpy and scipy replaced by import stubs. Without a mirror the check says which and
exits 0.

  python3 bench/stack_configs.py --tesselctl build/client/tesselctl
"""
import argparse
import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import logging
import math
import os
import re
import subprocess
import sys
import tempfile
import types

DS_GIT = '/work/.mirror/deepspeedai+DeepSpeed/repo'
GV_GIT = '/work/.mirror/PKU-DAIR+Hetu-Galvatron/repo'
MDS_GIT = '/work/.mirror/bigscience-workshop+Megatron-DeepSpeed/repo'

# name | plan arguments: each planned with --target STACK and exported to it
DS_PLANS = """\
gpt2-zero|--model GPT2-1.3B --cluster 8xA100-80G --batch 64
gpt2-zero3|--model GPT2-1.3B --cluster 8xA100-40G --batch 64 --no-dp --no-tp --no-pp
gpt2-pp2|--model GPT2-345M --cluster 8xA100-40G --batch 64 --pp 2
bert6-autotp|--model BERT-6B --cluster 8xA100-40G --batch 32 --no-pp --no-sdp
bert13|--model BERT-13B --cluster 2x8xA100-80G:ib200 --batch 64
llama8-ckpt|--model Llama3-8B --cluster 8xA100-40G --batch 32 --no-pp --no-tp
llama8-pp-ckpt|--model Llama3-8B --cluster 2x8xA100-40G:ib200 --batch 64 --pp 2 --no-sdp
gpt15-fp32|--model GPT3-15B --cluster 4x8xA100-80G:ib400 --batch 128 --fp32
gpt2-v100-fp32|--model GPT2-345M --cluster 8xV100-32G --batch 64 --fp32
gpt2-overlap|--model GPT2-762M --cluster 16xA100-40G --batch 64 --no-pp --no-sdp --overlap-grad-reduce
gpt2-fp32-reduce|--model GPT2-762M --cluster 16xA100-40G --batch 64 --no-pp --grad-reduce-bytes 4
llama70|--model Llama3-70B --cluster 8x8xH100-80G:8xib400 --batch 256
gpt2-pp2-bf16opt|--model GPT2-345M --cluster 2x8xA100-40G:ib100 --batch 64 --pp 2 --no-zero
llama8-pp2-bf16opt|--model Llama3-8B --cluster 2x8xA100-80G:ib200 --batch 64 --pp 2 --no-zero --no-sdp
gpt2-pp2-fp16-z0|--model GPT2-345M --cluster 2x8xA100-40G:ib100 --batch 64 --pp 2 --no-zero --fp16
gpt15-tp-pp2-bf16opt|--model GPT3-15B --cluster 4x8xA100-80G:ib400 --batch 256 --pp 2 --no-sdp --no-zero
gpt15-tp8-pp2-ckpt|--model GPT3-15B --cluster 2x8xA100-40G:ib100 --batch 256 --pp 2 --no-dp --no-sdp
bloom7-tp8-pp2|--model BLOOM-7B1 --cluster 2x8xA100-40G:ib100 --batch 256 --pp 2 --no-dp --no-sdp
bloom176-tp-pp|--model BLOOM-176B --cluster 48x8xA100-80G:4xopa100 --batch 2048
gpt2-pp4-type|--model GPT2-345M --cluster 2x8xA100-40G:ib100 --batch 64 --pp 4
gpt15-tp8-pp4-type|--model GPT3-15B --cluster 4x8xA100-80G:ib400 --batch 256 --pp 4 --no-dp --no-sdp
gpt15-tp8-pp7-uneven|--model GPT3-15B --cluster 7x8xA100-80G:ib400 --batch 112 --pp 7 --no-dp --no-sdp
gpt2-pp5-uneven|--model GPT2-345M --cluster 5x8xA100-40G:ib100 --batch 80 --pp 5 --no-tp
bloom7-tp4-pp7-uneven|--model BLOOM-7B1 --cluster 7x4xA100-40G:ib100 --batch 112 --pp 7 --no-dp --no-sdp --fp16
"""
GV_PLANS = """\
gpt15|--model GPT3-15B --cluster 4x8xA100-80G:ib400 --batch 128
gpt15-pp8|--model GPT3-15B --cluster 2x8xA100-40G:ib100 --batch 64
gpt39|--model GPT3-39B --cluster 4x8xA100-80G:ib200 --batch 64
bert-huge|--model BERT-Huge-48 --cluster 8xA100-40G --batch 128
bert-xhuge|--model BERT-xHuge --cluster 2x8xA100-40G:ib100 --batch 64
t5|--model T5-Large-48 --cluster 8xA100-40G --batch 64
llama8-pp4|--model Llama3-8B --cluster 8xA100-40G --batch 64 --pp 4
gpt2-mixed|--model GPT2-1.3B --cluster 8xA100-40G --batch 64 --pp 2 --no-dp
gpt2-v100|--model GPT2-762M --cluster 4xV100-32G --batch 32 --pp 4
bert13|--model BERT-13B --cluster 2x8xA100-40G:ib100 --batch 32
"""
# ---- import stubs: torch & co, and packages whose __init__ pulls in the GPU runtime ----

class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _stub(f'{cls.__name__}.{name}')

    def __call__(cls, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else type.__call__(cls)

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __getitem__(cls, key):
        return cls

    def __iter__(cls):
        return iter(())


def _stub(name):
    return _Meta(name, (), {'__getattr__': lambda self, n: _stub(n),
                            '__call__': lambda self, *a, **k:
                            a[0] if len(a) == 1 and callable(a[0]) else _stub(name)})


class _StubModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        value = _stub(f'{self.__name__}.{name}')
        setattr(self, name, value)
        return value


class _Loader(importlib.abc.Loader):
    def __init__(self, stub):
        self.stub = stub

    def create_module(self, spec):
        return _StubModule(spec.name) if self.stub else None

    def exec_module(self, module):
        pass  # a stub, or a package of the tree whose __init__.py is not run


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root, package, stubs):
        self.root, self.package, self.stubs = root, package, stubs

    def find_spec(self, name, path, target=None):
        if any(name == s or name.startswith(s + '.') for s in self.stubs):
            return importlib.machinery.ModuleSpec(name, _Loader(True), is_package=True)
        where = os.path.join(self.root, *name.split('.'))
        if (name == self.package or name.startswith(self.package + '.')) and os.path.isdir(where):
            spec = importlib.machinery.ModuleSpec(name, _Loader(False), is_package=True)
            spec.submodule_search_locations = [where]
            return spec
        return None


def _torch_stub():
    torch = importlib.import_module('torch')

    class dtype:  # a class, so that pydantic can type a field with it
        def __init__(self, name):
            self.name = name

    torch.dtype = dtype
    for n in ('float16', 'bfloat16', 'float32', 'float', 'half', 'int8', 'uint8'):
        setattr(torch, n, dtype(n))
    torch.__version__ = '2.9.0'
    return torch


def load_deepspeed(root):
    """DeepSpeedConfig from root/deepspeed; world size in load_deepspeed.world."""
    stubs = ('torch', 'numpy', 'packaging', 'deepspeed.comm', 'deepspeed.accelerator',
             'deepspeed.ops', 'deepspeed.git_version_info', 'deepspeed.utils.torch',
             'deepspeed.utils.groups')
    sys.meta_path.insert(0, _Finder(root, 'deepspeed', stubs))
    hjson = types.ModuleType('hjson')
    hjson.load = lambda f, object_pairs_hook=None: json.load(f, object_pairs_hook=object_pairs_hook)
    hjson.loads = lambda t, object_pairs_hook=None: json.loads(t, object_pairs_hook=object_pairs_hook)
    sys.modules['hjson'] = hjson
    _torch_stub()
    utils = importlib.import_module('deepspeed.utils')
    utils.logger = importlib.import_module('deepspeed.utils.logging').logger
    utils.logger.setLevel(logging.ERROR)
    comm = importlib.import_module('deepspeed.comm')
    comm.get_rank = lambda *a, **k: 0
    comm.get_world_size = lambda *a, **k: load_deepspeed.world
    version = importlib.import_module('deepspeed.git_version_info')
    version.version = open(os.path.join(root, 'version.txt')).read().strip()
    tp = importlib.import_module('deepspeed.runtime.tensor_parallel')
    tp.get_tensor_parallel_config = importlib.import_module(
        'deepspeed.runtime.tensor_parallel.config').get_tensor_parallel_config
    el, ee = importlib.import_module('deepspeed.elasticity'), importlib.import_module(
        'deepspeed.elasticity.elasticity')
    for n in ('compute_elastic_config', 'elasticity_enabled', 'ensure_immutable_elastic_config'):
        setattr(el, n, getattr(ee, n))
    return importlib.import_module('deepspeed.runtime.config')


def load_mds(root, ds_root):
    """parse_args of bigscience-workshop/Megatron-DeepSpeed (megatron/arguments.py) from
    root, torch stubbed, DeepSpeed's add_config_arguments taken from ds_root's
    deepspeed/__init__.py (only that function and its helper: the module pulls in the
    GPU runtime), the GLU activations' names from megatron/model/glu_activations.py
    (its modules are torch's). Run after load_deepspeed."""
    ns = {'argparse': argparse}
    tree = ast.parse(open(os.path.join(ds_root, 'deepspeed', '__init__.py')).read())
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)
             and n.name in ('_add_core_arguments', 'add_config_arguments')]
    exec(compile(ast.Module(funcs, []), 'deepspeed/__init__.py', 'exec'), ns)
    importlib.import_module('deepspeed').add_config_arguments = ns['add_config_arguments']
    glu = ast.parse(open(os.path.join(root, 'megatron', 'model', 'glu_activations.py')).read())
    names = next(n.value for n in glu.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], 'id', '') == 'GLU_ACTIVATIONS')
    sys.meta_path.insert(0, _Finder(root, 'megatron', ('megatron.model.glu_activations',)))
    importlib.import_module('megatron.model.glu_activations').GLU_ACTIVATIONS = {
        k.value: None for k in names.keys}
    return importlib.import_module('megatron.arguments').parse_args


def check_mds(parse_args, exp, plan, gpus):
    """The export's Megatron-DeepSpeed arguments as its parse_args reads them at the
    plan's world size, against the config beside them and the plan."""
    argv = exp['megatron_deepspeed']['args'] + [
        '--data-path', 'd', '--vocab-file', 'v', '--merge-file', 'm', '--train-samples', '1',
        '--lr', '1e-4']
    os.environ['WORLD_SIZE'], os.environ['RANK'] = str(gpus), '0'
    saved = sys.argv
    sys.argv = ['pretrain_gpt.py'] + argv
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            a = parse_args()
    finally:
        sys.argv = saved
    layers = layers_of(plan)
    tp = max(l['tp'] for l in layers)
    bad = []
    if (a.tensor_model_parallel_size, a.pipeline_model_parallel_size, a.data_parallel_size) != \
            (tp, plan['pp'], gpus // plan['pp'] // tp):
        bad.append(f'TP {a.tensor_model_parallel_size} PP {a.pipeline_model_parallel_size} '
                   f'DP {a.data_parallel_size}: not the plan\'s')
    if (a.micro_batch_size, a.global_batch_size) != (exp['train_micro_batch_size_per_gpu'],
                                                      exp.get('train_batch_size')):
        bad.append(f'micro {a.micro_batch_size}, global {a.global_batch_size}: not the config\'s')
    if a.checkpoint_activations != any(l['ckpt'] for l in layers) or \
            (a.checkpoint_activations and not a.deepspeed_activation_checkpointing):
        bad.append('recompute not as priced')
    if a.pp_partition_method not in ('type:transformer|embedding', 'type:transformer') or \
            a.pp_partition_method != exp['megatron_deepspeed']['args'][
                exp['megatron_deepspeed']['args'].index('--pp-partition-method') + 1] or \
            not a.deepspeed:
        bad.append(f'partition {a.pp_partition_method}, deepspeed {a.deepspeed}')
    if a.zero_stage != exp['zero_optimization']['stage']:
        bad.append(f'--zero-stage {a.zero_stage}, the config\'s '
                   f'{exp["zero_optimization"]["stage"]}')
    said = f'Megatron-DeepSpeed TP {a.tensor_model_parallel_size} PP ' \
           f'{a.pipeline_model_parallel_size} DP {a.data_parallel_size}'
    return said, bad


class _Arr:
    """The few numpy array operations partition_uniform / partition_balanced use: a[i, j],
    a[i], a[k:] = ..., a[k:] += 1, tolist()."""

    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        if isinstance(k, tuple):
            return self.d[k[0]][k[1]]
        return _Arr(self.d[k]) if isinstance(k, slice) else self.d[k]

    def __setitem__(self, k, v):
        if isinstance(k, tuple):
            self.d[k[0]][k[1]] = v
        else:
            self.d[k] = list(v.d if isinstance(v, _Arr) else v) if isinstance(k, slice) else v

    def __iadd__(self, x):
        return _Arr([e + x for e in self.d])

    def tolist(self):
        return list(self.d)


def _np_shim():
    def full(shape, v, dtype=None):
        if isinstance(shape, tuple):
            return _Arr([[v] * shape[1] for _ in range(shape[0])])
        return _Arr([v] * shape)
    np = types.ModuleType('numpy')
    np.inf = math.inf
    np.full = full
    np.zeros = lambda shape, dtype=float: full(shape, 0)
    np.cumsum = lambda w: [sum(w[:i + 1]) for i in range(len(w))]
    np.arange = lambda a, b, step: _Arr(list(range(a, b, step)))
    return np


def load_partition(ds_root):
    """partition_uniform and partition_balanced, DeepSpeed's own, from ds_root's
    deepspeed/runtime/utils.py (only those functions: the module pulls in the GPU runtime),
    run with numpy replaced by _np_shim. Returns partition(method, weights_of, specs, P):
    PipelineModule._partition_layers' parts for a layer list (runtime/pipe/module.py)."""
    tree = ast.parse(open(os.path.join(ds_root, 'deepspeed', 'runtime', 'utils.py')).read())
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)
             and n.name in ('partition_uniform', 'partition_balanced')]
    ns = {}
    exec(compile(ast.Module(funcs, []), 'deepspeed/runtime/utils.py', 'exec'), ns)

    def partition(method, names, P):
        saved = sys.modules.get('numpy')
        sys.modules['numpy'] = _np_shim()
        try:
            if method == 'uniform':
                return ns['partition_uniform'](num_items=len(names), num_parts=P)
            assert method.startswith('type:'), method
            rx = re.compile(method.split(':')[1], re.IGNORECASE)  # _find_layer_type
            return ns['partition_balanced'](weights=[int(bool(rx.search(n))) for n in names],
                                            num_parts=P)
        finally:
            if saved is None:
                del sys.modules['numpy']
            else:
                sys.modules['numpy'] = saved
    return partition


def mds_specs(blocks, half):
    """The class or function names of bigscience-workshop/Megatron-DeepSpeed's GPTModelPipe
    layer list (megatron/model/gpt_model.py at 8387ae17), what _find_layer_type matches:
    the cast, the tied embedding, a transpose lambda, the blocks, undo, the final norm,
    the tied head, the cast back under fp16/bf16."""
    return (['_to_float16', 'EmbeddingPipe', '<lambda>'] + ['ParallelTransformerLayerPipe'] * blocks
            + ['undo', 'MixedFusedLayerNorm', 'EmbeddingPipe'] + (['float16_to_fp32'] if half else []))


def check_stages(exp, plan):
    """The stages DeepSpeed's PipelineModule cuts from the export's partition method, as
    Tessel layers (embedding, blocks, head), against the plan's: Megatron-DeepSpeed's
    layer list where its arguments ride along, else one PipelineModule layer a Tessel
    layer. [] when they agree."""
    pp = plan['pp']
    if pp < 2 or check_stages.partition is None:
        return []
    counts = [sum(r['count'] for r in st['runs']) for st in plan['stages']]
    mds = exp.get('megatron_deepspeed', {}).get('args', [])
    if mds:
        method = mds[mds.index('--pp-partition-method') + 1]
        names = mds_specs(sum(counts) - 2, '--bf16' in mds or '--fp16' in mds)
    else:
        method = exp['pipeline']['partition']
        names = ['EmbeddingPipe'] + ['TransformerLayer'] * (sum(counts) - 2) + ['Head']
    parts = check_stages.partition(method, names, pp)
    got = [sum(n in ('EmbeddingPipe', 'ParallelTransformerLayerPipe', 'TransformerLayer', 'Head')
               for n in names[parts[i]:parts[i + 1]]) for i in range(pp)]
    bad = [] if got == counts else [f'{method} cuts {got}, the plan {counts}']
    norm = next((i for i in range(pp) if 'MixedFusedLayerNorm' in names[parts[i]:parts[i + 1]]), None)
    if mds and norm != pp - 1:
        bad.append(f'{method} puts the final norm on stage {norm}, not the head\'s')
    return bad


check_stages.partition = None  # load_partition's, where DeepSpeed's mirror is


def load_galvatron(root):
    stubs = ('torch', 'numpy', 'scipy', 'transformers', 'galvatron.core.runtime.parallel_state')
    sys.meta_path.insert(0, _Finder(root, 'galvatron', stubs))
    torch = _torch_stub()
    torch.distributed.get_world_size = lambda *a, **k: load_galvatron.world
    torch.distributed.get_rank = lambda *a, **k: 0
    importlib.import_module('numpy').ceil = math.ceil
    cu = importlib.import_module('galvatron.utils.config_utils')
    utils = importlib.import_module('galvatron.utils')
    for n in ('config2strategy', 'read_json_config', 'str2array'):
        setattr(utils, n, getattr(cu, n))
    importlib.import_module('galvatron.core.runtime.parallel_state').get_args = \
        lambda: load_galvatron.args
    return (importlib.import_module('galvatron.core.runtime.args_schema'),
            importlib.import_module('galvatron.core.runtime.hybrid_parallel_config'))


# ---- the plans ----

def plan_and_export(tesselctl, stack, args):
    base = [tesselctl, 'plan', '--local'] + args.split()
    tgt = ['--target', stack]
    exp = subprocess.run(base + tgt + ['--export', stack], capture_output=True, text=True)
    if exp.returncode != 0:
        return exp.returncode, exp.stderr.strip(), None
    doc = subprocess.run(base + tgt + ['--json'], capture_output=True, text=True, check=True)
    return 0, exp.stdout, json.loads(doc.stdout)['plan']


def layers_of(plan):
    """Per model layer, embedding first: the plan's strategy as its fields."""
    out = []
    for si, st in enumerate(plan['stages']):
        for run in st['runs']:
            base, *flags = run['strategy'].split('+')
            dims = [] if base == 'single' else [re.match(r'([a-z]+)(\d+)', d).groups()
                                                for d in base.split('-')]
            deg = {k: int(v) for k, v in dims}
            for _ in range(run['count']):
                out.append(dict(tp=deg.get('tp', 1), dp=deg.get('dp', 1), sdp=deg.get('sdp', 1),
                                tp_inner=not dims or dims[0][0] == 'tp' or 'tp' not in deg,
                                ckpt='ckpt' in flags, zero=int(next((f[4:] for f in flags
                                                                     if f.startswith('zero')), 0)),
                                stage=si))
    return out


def check_deepspeed(cfgmod, name, text, plan):
    exp = json.loads(text)
    gpus, pp = sum(s['n_devices'] for s in plan['stages']), plan['pp']
    tp = exp.get('tensor_parallel', {}).get('autotp_size', 1)
    mds = exp.get('megatron_deepspeed', {}).get('args', [])
    mp = int(mds[mds.index('--tensor-model-parallel-size') + 1]) if mds else 1
    # a PipelineModule hands its grid over as the mpu (the data-parallel ranks: the
    # Megatron-DeepSpeed mpu's without its TP ranks); else every GPU
    load_deepspeed.world = gpus // pp // mp if pp > 1 else gpus
    c = cfgmod.DeepSpeedConfig(exp)
    bad = []
    if c.train_micro_batch_size_per_gpu * c.gradient_accumulation_steps * \
            (gpus // pp // tp // mp) != plan['global_batch'] or \
            c.gradient_accumulation_steps != plan['n_micro']:
        bad.append('the samples per step are not the plan\'s')
    dp = max(l['dp'] for l in layers_of(plan))
    stage = c.zero_optimization_stage
    # runtime/engine.py: overlap_comm only in the ZeRO-1/2 optimizer, turned off under a
    # PipelineModule; bf16 at stage 0 under a PipelineModule runs BF16_Optimizer
    overlapped = c.zero_config.overlap_comm and stage in (1, 2) and pp == 1
    if dp > 1 and overlapped == bool(plan.get('grad_reduce_exposed')):
        bad.append(f'DP reduce overlapped {overlapped}, priced exposed '
                   f'{bool(plan.get("grad_reduce_exposed"))}')
    runs = ds_optimizer(c, pp)
    if (runs == 'BF16_Optimizer') != bool(plan.get('ds_bf16_optimizer')):
        bad.append(f'{runs} runs; the plan was priced with'
                   f'{"" if plan.get("ds_bf16_optimizer") else "out"} BF16_Optimizer')
    if runs == 'BF16_Optimizer':
        # its accumulation buffer in grad_accum_dtype (the model's bf16 unless set), each
        # .grad added after the backward (update_hp_grads), as priced
        acc = c.grad_accum_dtype or 'bf16'
        if acc not in ('bf16', 'bfloat16') or plan.get('grad_buf_bytes', 2) != 2:
            bad.append(f'BF16_Optimizer accumulates in {acc}; the plan priced a '
                       f'{plan.get("grad_buf_bytes", 2)}-byte buffer')
        if c.bfloat16_config.immediate_grad_update:
            bad.append('immediate_grad_update: the .grad added by hooks, not after the backward')
    said = f'stage {stage}, {runs}, micro {c.train_micro_batch_size_per_gpu}, ' \
           f'steps {c.gradient_accumulation_steps}, world {load_deepspeed.world}'
    bad += check_stages(exp, plan)
    if pp > 1:
        said += f', cut {exp["pipeline"]["partition"]}'
    if mds and check_deepspeed.mds is None:
        said += '; its Megatron-DeepSpeed arguments not read (no mirror)'
    elif mds:
        more, wrong = check_mds(check_deepspeed.mds, exp, plan, gpus)
        said, bad = f'{said}; {more}', bad + wrong
    return said, bad


check_deepspeed.mds = None  # parse_args of Megatron-DeepSpeed, where its mirror is


def ds_optimizer(c, pp):
    """The optimizer wrapper DeepSpeed's engine picks for config c (runtime/engine.py
    _do_optimizer_sanity_check at edaa722, get_data_types: grad_accum_dtype None is the
    model's dtype); pp > 1: under a PipelineModule."""
    model = 'fp16' if c.float16_config.enabled else 'bf16' if c.bfloat16_config.enabled \
        else 'fp32'
    acc = {'bfloat16': 'bf16', 'float16': 'fp16', 'float32': 'fp32'}.get(
        str(c.grad_accum_dtype or model), str(c.grad_accum_dtype or model))
    stage = c.zero_optimization_stage
    if stage > 0:
        off = c.zero_config.offload_optimizer  # engine.py zero_cpu_offload
        offload = off is not None and str(off.device).endswith('cpu')
        if model == 'bf16' and acc == 'fp32' and stage == 1 and not offload:
            return 'BF16_Optimizer'
        return 'ZeRO optimizer'
    if model != acc:
        return 'unsupported mix (NotImplementedError)'
    if model == 'fp32':
        return 'the basic optimizer'
    if model == 'bf16' and pp > 1:
        return 'BF16_Optimizer'
    return 'FP16_Optimizer' if model == 'fp16' else 'FP16_Optimizer (bf16, DDP_BFLOAT16)'


def check_galvatron(mods, name, text, plan, tmp):
    schema, hpc = mods
    gpus, pp = sum(s['n_devices'] for s in plan['stages']), plan['pp']
    layers = layers_of(plan)
    path = os.path.join(tmp, f'galvatron_config_{name}.json')
    with open(path, 'w') as f:
        f.write(text)
    load_galvatron.world = gpus
    args = schema.GalvatronRuntimeArgs(parallel={'galvatron_config_path': path},
                                       model={'num_layers': len(layers) - 2}, world_size=gpus)
    load_galvatron.args = args
    with contextlib.redirect_stdout(io.StringIO()):
        hp = hpc.get_hybrid_parallel_configs_api(args)
        hpc.check_hp_config(hp, [len(layers) - 2])
        schema.GalvatronParallelArgs.model_validate(args.parallel.model_dump())
        whole = hpc.hp_config_whole_model(
            ['embed'] + ['gpt_dec'] * (len(layers) - 2) + ['cls'], hp,
            vocab_sdp=args.parallel.vocab_sdp, vocab_tp=args.parallel.vocab_tp,
            vocab_sp=args.parallel.vocab_sp, vocab_cp=args.parallel.vocab_cp)
    bad = []
    if (args.train.global_batch_size, args.train.chunks) != (plan['global_batch'], plan['n_micro']):
        bad.append('batch or chunks')
    if args.parallel.pipeline_type != 'pipedream_flush':
        bad.append('not 1F1B')
    for i, (l, tp, dpt, ck, st, dps) in enumerate(zip(
            layers, whole['tp_sizes_whole'], whole['dp_types_whole'],
            whole['checkpoint_flags_whole'], whole['pp_ranks_whole'], whole['dp_sizes_whole'])):
        sharded = (dpt == 1 or args.parallel.default_dp_type == 'zero3') and dps > 1
        if (tp, sharded, bool(ck), st, dps) != (l['tp'], l['sdp'] > 1, l['ckpt'], l['stage'],
                                                 l['dp'] * l['sdp']):
            bad.append(f'layer {i}: Galvatron runs tp{tp} dp{dps} sdp {sharded} ckpt {ck} '
                       f'stage {st}')
        # main lays ranks out pp-dp-cp-tp-sp (comm_groups.py): TP always consecutive
        if 1 < l['tp'] < gpus // pp and not l['tp_inner']:
            bad.append(f'layer {i}: TP ranks apart, consecutive in Galvatron')
    return f'pp {pp}, {gpus} GPUs', bad


def extract(git_dir, paths, dest):
    os.makedirs(dest)
    arch = subprocess.run(['git', '--git-dir', git_dir, 'archive', 'HEAD'] + paths,
                          capture_output=True, check=True).stdout
    subprocess.run(['tar', 'x', '-C', dest], input=arch, check=True)
    head = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', '--short', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.strip()
    return head


def rows(text):
    return [line.split('|', 1) for line in text.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tesselctl', default='build/client/tesselctl')
    ap.add_argument('--deepspeed-git', default=DS_GIT)
    ap.add_argument('--galvatron-git', default=GV_GIT)
    ap.add_argument('--megatron-deepspeed-git', default=MDS_GIT)
    a = ap.parse_args()
    failures, ran = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        stacks = []
        if os.path.isdir(a.deepspeed_git):
            head = extract(a.deepspeed_git, ['deepspeed', 'version.txt'], os.path.join(tmp, 'ds'))
            stacks.append(('deepspeed', head, load_deepspeed(os.path.join(tmp, 'ds')), DS_PLANS))
            check_stages.partition = load_partition(os.path.join(tmp, 'ds'))
            if os.path.isdir(a.megatron_deepspeed_git):
                mds_root = os.path.join(tmp, 'mds')
                mhead = extract(a.megatron_deepspeed_git,
                                ['megatron/arguments.py', 'megatron/enums.py',
                                 'megatron/logging.py', 'megatron/model/glu_activations.py'],
                                mds_root)
                check_deepspeed.mds = load_mds(mds_root, os.path.join(tmp, 'ds'))
                print(f'megatron-deepspeed@{mhead}: its parse_args reads the TP x PP exports')
            else:
                print(f'megatron-deepspeed: no mirror at {a.megatron_deepspeed_git} '
                      '(fetch bigscience-workshop/Megatron-DeepSpeed): its arguments not read')
        else:
            print(f'deepspeed: skipped, no mirror at {a.deepspeed_git} (fetch deepspeedai/DeepSpeed)')
        if os.path.isdir(a.galvatron_git):
            head = extract(a.galvatron_git, ['galvatron'], os.path.join(tmp, 'gv'))
            stacks.append(('galvatron', head, load_galvatron(os.path.join(tmp, 'gv')), GV_PLANS))
        else:
            print(f'galvatron: skipped, no mirror at {a.galvatron_git} '
                  '(fetch PKU-DAIR/Hetu-Galvatron)')
        for stack, head, mods, plans in stacks:
            for name, args in rows(plans):
                rc, text, plan = plan_and_export(a.tesselctl, stack, args)
                if rc != 0:
                    print(f'{stack} {name}: tesselctl exit {rc}: {text}')
                    failures += 1
                    continue
                try:
                    said, bad = (check_deepspeed(mods, name, text, plan) if stack == 'deepspeed'
                                 else check_galvatron(mods, name, text, plan, tmp))
                except Exception as e:  # the stack's reader refused the file
                    said, bad = 'refused by the stack', [f'{type(e).__name__}: {e}']
                ran += 1
                failures += bool(bad)
                print(f'{stack}@{head} {name}: {"MISMATCH" if bad else "ok"} ({said})'
                      + ''.join(f'\n    {b}' for b in bad[:4])
                      + (f'\n    ... {len(bad) - 4} more' if len(bad) > 4 else ''))
    print(f'{ran} exports read by their stacks, {failures} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
