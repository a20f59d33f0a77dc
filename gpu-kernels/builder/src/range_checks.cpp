// sluice-range-checks: an LLVM pass plugin that lets bounds-checked loops run unchecked
// when one test before the loop proves that no check of the loop can fail.
//
// A Rust bounds check in a loop is a branch to a block that only traps:
//
//     for i in 0..k { sum = a[r * k + i].mul_add(b[i * n + c], sum) }
//
//     loop:  %x = i * n + c            ; {c,+,n}: an affine function of the iteration
//            br (%x u< %len), %body, %trap
//
// LLVM's own passes remove such a check only for a constant stride (IRCE), and not at all
// when the loop's exit test is an equality (what `0..k` becomes). This pass handles any
// loop-invariant stride. For each loop with a computable latch exit count `E` (iterations
// `0..=E`), it collects the checks `X u< L` (or `X u<= L`) whose false side traps, where
// `X = {S,+,T}` is affine in that loop and `L` is invariant, and computes in the preheader
//
//     fast = for every check: S + T * E does not overflow (unsigned) and S + T * E u< L
//
// Without overflow `X` grows with the iteration, so at every iteration `j <= E` it is at
// most `S + T * E`: each check holds whenever `fast` does. A loop walking down is tested the
// other way round (`S` below the limit, `S - |T| * E` not below zero); a step whose sign is
// unknown gets both tests, either enough. The loop is then versioned: the original runs when
// `fast` holds, its checks replaced by "go on"; a copy, checks and all and not unrolled,
// runs otherwise. A trap still happens where it happened, with the same inputs. Not
// touched: the latch's own branch (its exit count is where it fails), loops LLVM may not
// clone (`noduplicate`), loops with an operation the threads of a warp must reach together
// (a barrier, shuffle, vote, `activemask`, MMA: the test may differ between the threads of a
// warp, which would then run different copies), loops of more than 2000 instructions.
//
// Registered as the function pass `sluice-range-checks`:
//     opt -load-pass-plugin=sluice-range-checks.so --passes='function(sluice-range-checks)'
// With `SLUICE_RANGE_CHECKS_DEBUG=1` it prints what it versioned to stderr.

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h"  // LLVM 22 and later
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <cstdlib>

using namespace llvm;

namespace {

bool debugging() {
    const char* v = std::getenv("SLUICE_RANGE_CHECKS_DEBUG");
    return v && *v && *v != '0';
}

// Whether `bb` leads only to a trap: a chain of empty unconditional branches ending in a
// block of `call @llvm.trap()` and `unreachable` (nothing else: no message, no store).
bool traps(const BasicBlock* bb) {
    for (int hops = 0; bb && hops < 8; ++hops) {
        const Instruction* first = &*bb->getFirstNonPHIOrDbg();
        if (auto* br = dyn_cast<BranchInst>(first)) {
            if (br->isConditional()) return false;
            bb = br->getSuccessor(0);
            continue;
        }
        auto* call = dyn_cast<IntrinsicInst>(first);
        if (!call || call->getIntrinsicID() != Intrinsic::trap) return false;
        const Instruction* next = call->getNextNode();
        return next && isa<UnreachableInst>(next);
    }
    return false;
}

// One bounds check of a loop: `X u< L` (or `X u<= L` when `inclusive`) must hold to go on.
struct Check {
    BranchInst* branch;
    bool continue_on_true;  // the branch goes on along its true edge
    const SCEVAddRecExpr* x;
    const SCEV* limit;
    bool inclusive;
};

// The check `branch` makes, if it is one this pass handles.
std::optional<Check> as_check(BranchInst* branch, Loop* loop, ScalarEvolution& se) {
    if (!branch->isConditional()) return std::nullopt;
    auto* cmp = dyn_cast<ICmpInst>(branch->getCondition());
    if (!cmp) return std::nullopt;
    bool true_traps = traps(branch->getSuccessor(0)) && !loop->contains(branch->getSuccessor(0));
    bool false_traps = traps(branch->getSuccessor(1)) && !loop->contains(branch->getSuccessor(1));
    if (true_traps == false_traps) return std::nullopt;
    // The predicate under which the loop goes on.
    ICmpInst::Predicate pred = false_traps ? cmp->getPredicate() : cmp->getInversePredicate();
    Value* x;
    Value* limit;
    bool inclusive;
    switch (pred) {
    case ICmpInst::ICMP_ULT: x = cmp->getOperand(0), limit = cmp->getOperand(1), inclusive = false; break;
    case ICmpInst::ICMP_UGT: x = cmp->getOperand(1), limit = cmp->getOperand(0), inclusive = false; break;
    case ICmpInst::ICMP_ULE: x = cmp->getOperand(0), limit = cmp->getOperand(1), inclusive = true; break;
    case ICmpInst::ICMP_UGE: x = cmp->getOperand(1), limit = cmp->getOperand(0), inclusive = true; break;
    default: return std::nullopt;
    }
    if (!x->getType()->isIntegerTy()) return std::nullopt;
    auto* rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(x));
    if (!rec || rec->getLoop() != loop || !rec->isAffine()) return std::nullopt;
    const SCEV* lim = se.getSCEV(limit);
    if (!se.isLoopInvariant(lim, loop)) return std::nullopt;
    return Check{branch, false_traps, rec, lim, inclusive};
}

// Whether the loop holds an operation the threads of a warp must reach together: a
// convergent call (a barrier or warp intrinsic), inline assembly of one (the device std
// writes shuffles, votes, `activemask`, barriers and MMAs as `asm!`, which LLVM does not
// mark convergent: matched by name), or a call to a function it cannot see into. The test
// before the loop may differ from thread to thread (it reads `%tid`), so the threads of one
// warp could take the two copies of the loop and meet such an operation apart: a warp sum
// that needs every lane would fail, `activemask` would change. LLVM's own versioning and
// unswitching leave such loops alone for the same reason.
bool has_warp_wide_op(Loop* loop) {
    static const char* const kWarpWide[] = {"sync", "activemask", "bar", "vote", "match", "redux",
                                            "elect", "mma", "ldmatrix", "setmaxnreg", "exit", "trap"};
    for (BasicBlock* bb : loop->blocks()) {
        for (Instruction& inst : *bb) {
            auto* call = dyn_cast<CallBase>(&inst);
            if (!call) continue;
            if (call->isConvergent()) return true;
            if (call->isInlineAsm()) {
                StringRef text = cast<InlineAsm>(call->getCalledOperand())->getAsmString();
                for (const char* op : kWarpWide)
                    if (text.contains(op)) return true;
                continue;
            }
            Function* callee = call->getCalledFunction();
            if (callee && (callee->isIntrinsic() || callee->hasFnAttribute(Attribute::NoSync))) continue;
            return true;
        }
    }
    return false;
}

bool version_loop(Loop* loop, ScalarEvolution& se, LoopInfo& li, DominatorTree& dt) {
    BasicBlock* preheader = loop->getLoopPreheader();
    BasicBlock* latch = loop->getLoopLatch();
    if (!preheader || !latch || !loop->isLoopExiting(latch)) return false;
    // A loop LLVM may not duplicate (`noduplicate` or convergent calls, `indirectbr`) keeps
    // its checks, as loop unswitching leaves it.
    if (!loop->isSafeToClone()) return false;
    // A loop whose threads must meet at a warp-wide operation keeps its checks (see
    // `has_warp_wide_op`).
    if (has_warp_wide_op(loop)) return false;
    // A copy of a very large loop costs more code than its checks cost time.
    unsigned size = 0;
    for (BasicBlock* bb : loop->blocks()) size += bb->size();
    if (size > 2000) return false;
    const SCEV* count = se.getExitCount(loop, latch);
    if (isa<SCEVCouldNotCompute>(count) || !count->getType()->isIntegerTy()) return false;

    SmallVector<Check, 8> checks;
    for (BasicBlock* bb : loop->blocks()) {
        auto* branch = dyn_cast<BranchInst>(bb->getTerminator());
        // The latch's own branch as a check would make `E` the iteration where it fails:
        // the test before the loop could never pass.
        if (!branch || bb == latch) continue;
        if (auto check = as_check(branch, loop, se)) checks.push_back(*check);
    }
    if (checks.empty()) return false;

    Instruction* at = preheader->getTerminator();
    SCEVExpander expander(se, "sluice.rc");
    IRBuilder<> b(at);
    Value* fast = nullptr;
    SmallVector<Check, 8> hoisted;
    for (const Check& c : checks) {
        Type* ty = c.x->getType();
        if (count->getType()->getIntegerBitWidth() > ty->getIntegerBitWidth()) continue;
        const SCEV* last_iteration = se.getNoopOrZeroExtend(count, ty);
        const SCEV* start = c.x->getStart();
        const SCEV* step = c.x->getStepRecurrence(se);
        // `X(j) = S + T * j` (mod 2^w) both as `T` going up and as `|T| = -T` going down
        // (`(0..k).rev()`): each test below is sound for any `T`, and a step whose sign is
        // known needs only its own.
        bool up = !se.isKnownNegative(step), down = !se.isKnownNonNegative(step);
        const SCEV* minus = se.getNegativeSCEV(step);
        if (!expander.isSafeToExpandAt(last_iteration, at) || !expander.isSafeToExpandAt(start, at) ||
            !expander.isSafeToExpandAt(step, at) || !expander.isSafeToExpandAt(minus, at) ||
            !expander.isSafeToExpandAt(c.limit, at))
            continue;
        b.SetInsertPoint(at);
        // Each input frozen: one that is poison where the original never branches on it
        // (a step that only the second iteration uses, in a loop that traps in the first)
        // must not let the test pass.
        auto input = [&](const SCEV* v) { return b.CreateFreeze(expander.expandCodeFor(v, ty, at)); };
        Value* e = input(last_iteration);
        Value* s0 = input(start);
        Value* limit = input(c.limit);
        Value* t = up ? input(step) : nullptr;
        Value* m = down ? input(minus) : nullptr;
        b.SetInsertPoint(at);
        auto below = [&](Value* v) { return c.inclusive ? b.CreateICmpULE(v, limit) : b.CreateICmpULT(v, limit); };
        Value* holds = nullptr;
        if (up) {
            // X(E) = S + T * E without wrapping, below the limit: then so is every X(j),
            // j <= E (they grow with j).
            Value* mul = b.CreateBinaryIntrinsic(Intrinsic::umul_with_overflow, t, e);
            Value* add = b.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, s0, b.CreateExtractValue(mul, 0));
            Value* wraps = b.CreateOr(b.CreateExtractValue(mul, 1), b.CreateExtractValue(add, 1));
            holds = b.CreateAnd(below(b.CreateExtractValue(add, 0)), b.CreateNot(wraps));
        }
        if (down) {
            // X(j) = S - |T| * j: the largest is X(0) = S, below the limit, and the smallest,
            // X(E) = S - |T| * E, does not wrap below zero; every X(j) is between them.
            Value* mul = b.CreateBinaryIntrinsic(Intrinsic::umul_with_overflow, m, e);
            Value* wraps = b.CreateOr(b.CreateExtractValue(mul, 1), b.CreateICmpUGT(b.CreateExtractValue(mul, 0), s0));
            Value* ok = b.CreateAnd(below(s0), b.CreateNot(wraps));
            holds = holds ? b.CreateOr(holds, ok) : ok;
        }
        fast = fast ? b.CreateAnd(fast, holds) : holds;
        hoisted.push_back(c);
    }
    if (!fast) return false;
    fast = b.CreateFreeze(fast, "sluice.rc.fast");

    // Version the loop: the original runs when `fast` holds and loses the checks; a copy
    // keeps them for everything else.
    BasicBlock* fast_ph = SplitBlock(preheader, at, &dt, &li, nullptr, loop->getHeader()->getName() + ".rc.fast");
    ValueToValueMapTy map;
    SmallVector<BasicBlock*, 16> copies;
    Loop* checked = cloneLoopWithPreheader(fast_ph, preheader, loop, map, ".rc.checked", &li, &dt, copies);
    remapInstructionsInBlocks(copies, map);
    // The checked copy is the cold path: not unrolled, so that it costs neither code size
    // nor registers beside the fast loop.
    LLVMContext& ctx = preheader->getContext();
    SmallVector<Metadata*, 4> props{nullptr};
    if (MDNode* id = checked->getLoopID())
        for (unsigned i = 1; i < id->getNumOperands(); ++i) props.push_back(id->getOperand(i));
    props.push_back(MDNode::get(ctx, MDString::get(ctx, "llvm.loop.unroll.disable")));
    MDNode* id = MDNode::getDistinct(ctx, props);
    id->replaceOperandWith(0, id);
    checked->setLoopID(id);
    Instruction* old = preheader->getTerminator();
    BranchInst::Create(fast_ph, checked->getLoopPreheader(), fast, old->getIterator());
    old->eraseFromParent();
    // The exits gain the copy's exiting blocks as predecessors (LCSSA: every value used
    // outside the loop reaches it through a phi of an exit block).
    SmallVector<BasicBlock*, 8> exits;
    loop->getUniqueExitBlocks(exits);
    for (BasicBlock* exit : exits) {
        for (PHINode& phi : exit->phis()) {
            unsigned n = phi.getNumIncomingValues();
            for (unsigned i = 0; i < n; ++i) {
                BasicBlock* from = phi.getIncomingBlock(i);
                if (!loop->contains(from)) continue;
                Value* v = phi.getIncomingValue(i);
                Value* mapped = map.lookup(v);
                phi.addIncoming(mapped ? mapped : v, cast<BasicBlock>(map[from]));
            }
        }
    }
    // In the original, now the fast copy, the hoisted checks always go on.
    for (const Check& c : hoisted)
        c.branch->setCondition(ConstantInt::getBool(c.branch->getContext(), c.continue_on_true));
    dt.recalculate(*preheader->getParent());
    se.forgetAllLoops();
    if (debugging()) {
        errs() << "sluice-range-checks: " << loop->getHeader()->getParent()->getName() << ": a loop of depth "
               << loop->getLoopDepth() << ": " << hoisted.size() << " of " << checks.size()
               << " bounds checks behind one test, exit count " << *count << "\n";
    }
    return true;
}

struct RangeChecks : PassInfoMixin<RangeChecks> {
    PreservedAnalyses run(Function& f, FunctionAnalysisManager& am) {
        auto& li = am.getResult<LoopAnalysis>(f);
        auto& se = am.getResult<ScalarEvolutionAnalysis>(f);
        auto& dt = am.getResult<DominatorTreeAnalysis>(f);
        bool changed = false;
        // The loops as they are now: a copy made for one is never versioned again.
        SmallVector<Loop*, 16> loops(li.getLoopsInPreorder());
        for (Loop* loop : loops) changed |= version_loop(loop, se, li, dt);
        return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return false; }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "sluice-range-checks", "1", [](PassBuilder& pb) {
                pb.registerPipelineParsingCallback(
                    [](StringRef name, FunctionPassManager& fpm, ArrayRef<PassBuilder::PipelineElement>) {
                        if (name != "sluice-range-checks") return false;
                        fpm.addPass(RangeChecks());
                        return true;
                    });
            }};
}
