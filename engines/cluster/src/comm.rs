//! The MPI side: starting MPI once per process, the control messages rank 0 broadcasts,
//! the exchange of a phase's pieces, and ending every rank when one fails.

use crate::plan::Need;
use hassium_core::BaseId;
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// MPI stays initialised until the process ends; dropping the universe finalises it.
static UNIVERSE: Mutex<Option<mpi::environment::Universe>> = Mutex::new(None);

/// "rank r on host h" for every rank, gathered when MPI started.
static HOSTS: OnceLock<Vec<String>> = OnceLock::new();

/// Tag of the pieces of a phase; control messages are broadcasts.
const PIECES: i32 = 11;
/// Tag of a failed rank's error message.
const FAILURE: i32 = 12;
/// Tag of a base's block sent home or out.
const BLOCK: i32 = 13;

/// Bytes of a control message's first broadcast: a length and the start of the payload.
const HEAD: usize = 512;

/// Starts MPI (once) and returns the world.
pub fn start() -> Result<SimpleCommunicator, String> {
    let mut u = UNIVERSE.lock().unwrap_or_else(|p| p.into_inner());
    if u.is_none() {
        if mpi::environment::is_finalized() {
            return Err("MPI was finalised already; the cluster engine starts once".into());
        }
        let (universe, _provided) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or("MPI was initialised by someone else before the cluster engine")?;
        *u = Some(universe);
        let world = SimpleCommunicator::world();
        install_panic_hook(world.rank());
        let name = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let hosts = gather_strings(&world, &name);
        let _ = HOSTS.set(hosts);
    }
    Ok(SimpleCommunicator::world())
}

/// Ends MPI on this rank (idempotent).
pub fn finish() {
    let mut u = UNIVERSE.lock().unwrap_or_else(|p| p.into_inner());
    drop(u.take());
}

/// One line per rank: its host name.
pub fn hosts() -> Option<&'static [String]> {
    HOSTS.get().map(|h| h.as_slice())
}

/// A panic anywhere in this library ends every rank: a rank that stops answering would
/// otherwise leave the others waiting forever.
fn install_panic_hook(rank: i32) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        eprintln!("hassium cluster: rank {rank} panicked; ending every rank");
        SimpleCommunicator::world().abort(70);
    }));
}

/// Ends every rank with `message` printed once (by this rank).
pub fn abort(world: &SimpleCommunicator, message: &str) -> ! {
    eprintln!("hassium cluster: rank {}: {message}", world.rank());
    world.abort(1)
}

/// Every rank's string, on every rank (fixed 256-byte slots).
fn gather_strings(world: &SimpleCommunicator, s: &str) -> Vec<String> {
    let mut mine = [0u8; 256];
    let b = s.as_bytes();
    let n = b.len().min(255);
    mine[..n].copy_from_slice(&b[..n]);
    let mut all = vec![0u8; 256 * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    all.chunks(256)
        .map(|c| {
            let end = c.iter().position(|&x| x == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect()
}

/// A 64-bit value equal on every rank, or the first rank whose value differs.
pub fn first_different(world: &SimpleCommunicator, value: u64) -> Option<usize> {
    let mut all = vec![0u64; world.size() as usize];
    world.all_gather_into(&value, &mut all[..]);
    all.iter().position(|&v| v != all[0])
}

/// What the communication of this rank cost.
#[derive(Clone, Debug, Default)]
pub struct CommStats {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub messages: u64,
    pub broadcasts: u64,
    pub allgathers: u64,
    /// Bytes of the pieces (halos) sent in phase exchanges: what a stencil must move.
    pub piece_bytes: u64,
    pub wait_seconds: f64,
}

/// Rank 0's side of a control message: broadcasts `msg` (one broadcast when it fits the
/// head, two otherwise).
pub fn send_control(world: &SimpleCommunicator, msg: &[u8], stats: &mut CommStats) {
    let t = Instant::now();
    let mut head = [0u8; HEAD];
    head[..8].copy_from_slice(&(msg.len() as u64).to_le_bytes());
    let first = msg.len().min(HEAD - 8);
    head[8..8 + first].copy_from_slice(&msg[..first]);
    let root = world.process_at_rank(0);
    root.broadcast_into(&mut head[..]);
    if msg.len() > first {
        let mut rest = msg[first..].to_vec();
        root.broadcast_into(&mut rest[..]);
        stats.broadcasts += 1;
    }
    stats.broadcasts += 1;
    stats.bytes_sent += msg.len() as u64;
    stats.wait_seconds += t.elapsed().as_secs_f64();
}

/// A worker's side of [`send_control`].
pub fn receive_control(world: &SimpleCommunicator, stats: &mut CommStats) -> Vec<u8> {
    let mut head = [0u8; HEAD];
    let root = world.process_at_rank(0);
    root.broadcast_into(&mut head[..]);
    let len = u64::from_le_bytes(head[..8].try_into().expect("8 bytes")) as usize;
    let first = len.min(HEAD - 8);
    let mut msg = head[8..8 + first].to_vec();
    if len > first {
        let mut rest = vec![0u8; len - first];
        root.broadcast_into(&mut rest[..]);
        msg.extend_from_slice(&rest);
    }
    stats.bytes_received += len as u64;
    msg
}

/// Memory of one base on this rank, for packing and unpacking pieces.
pub trait Memory {
    /// The bytes of `base` and its element size; `None` when this rank has none.
    fn bytes(&mut self, base: BaseId) -> Option<(&mut [u8], usize)>;
}

/// Sends this rank's pieces of `needs` and receives its own: one message per rank pair,
/// all posted before any is waited on.
pub fn exchange(
    world: &SimpleCommunicator,
    needs: &[Need],
    mem: &mut dyn Memory,
    stats: &mut CommStats,
) -> Result<(), String> {
    exchange_around(world, needs, mem, stats, || {})
}

/// [`exchange`], running `during` after every message is posted and before any is
/// waited on: work that reads no piece and writes no memory a piece is sent from or
/// received into (the pieces sent are copied out before posting).
pub fn exchange_around(
    world: &SimpleCommunicator,
    needs: &[Need],
    mem: &mut dyn Memory,
    stats: &mut CommStats,
    during: impl FnOnce(),
) -> Result<(), String> {
    let me = world.rank() as u32;
    let ranks = world.size() as u32;
    let mut outgoing: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut incoming: Vec<(u32, Vec<u8>)> = Vec::new();
    for peer in 0..ranks {
        if peer == me {
            continue;
        }
        let mut out = Vec::new();
        let mut inbytes = 0usize;
        for n in needs {
            if n.src == me && n.dst == peer {
                let (bytes, size) = mem
                    .bytes(n.base)
                    .ok_or_else(|| format!("base {} has no memory on rank {me}", n.base.0))?;
                out.extend_from_slice(&bytes[n.lo as usize * size..n.hi as usize * size]);
            } else if n.src == peer && n.dst == me {
                let size = mem.bytes(n.base).map_or(1, |(_, s)| s);
                inbytes += (n.hi - n.lo) as usize * size;
            }
        }
        if !out.is_empty() {
            outgoing.push((peer, out));
        }
        if inbytes > 0 {
            incoming.push((peer, vec![0u8; inbytes]));
        }
    }
    mpi::request::scope(|scope| {
        let mut requests = Vec::with_capacity(outgoing.len() + incoming.len());
        for (peer, buf) in incoming.iter_mut() {
            let p = world.process_at_rank(*peer as i32);
            requests.push(p.immediate_receive_into_with_tag(scope, &mut buf[..], PIECES));
        }
        for (peer, buf) in &outgoing {
            let p = world.process_at_rank(*peer as i32);
            requests.push(p.immediate_send_with_tag(scope, &buf[..], PIECES));
        }
        during();
        let t = Instant::now();
        for r in requests {
            r.wait();
        }
        stats.wait_seconds += t.elapsed().as_secs_f64();
    });
    stats.messages += outgoing.len() as u64;
    for (_, b) in &outgoing {
        stats.bytes_sent += b.len() as u64;
        stats.piece_bytes += b.len() as u64;
    }
    for (peer, buf) in incoming {
        stats.bytes_received += buf.len() as u64;
        let mut at = 0usize;
        for n in needs.iter().filter(|n| n.src == peer && n.dst == me) {
            let (bytes, size) = mem
                .bytes(n.base)
                .ok_or_else(|| format!("base {} has no memory on rank {me}", n.base.0))?;
            let len = (n.hi - n.lo) as usize * size;
            bytes[n.lo as usize * size..n.lo as usize * size + len]
                .copy_from_slice(&buf[at..at + len]);
            at += len;
        }
    }
    Ok(())
}

/// Sends `bytes` to `dst` (a base's block going home or out).
pub fn send_block(world: &SimpleCommunicator, dst: u32, bytes: &[u8], stats: &mut CommStats) {
    let t = Instant::now();
    world
        .process_at_rank(dst as i32)
        .send_with_tag(bytes, BLOCK);
    stats.wait_seconds += t.elapsed().as_secs_f64();
    stats.bytes_sent += bytes.len() as u64;
    stats.messages += 1;
}

/// Receives a block sent by [`send_block`] from `src` into `bytes`.
pub fn receive_block(
    world: &SimpleCommunicator,
    src: u32,
    bytes: &mut [u8],
    stats: &mut CommStats,
) {
    let t = Instant::now();
    world
        .process_at_rank(src as i32)
        .receive_into_with_tag(bytes, BLOCK);
    stats.wait_seconds += t.elapsed().as_secs_f64();
    stats.bytes_received += bytes.len() as u64;
}

/// Broadcasts `bytes` from rank 0 (a replicated base rank 0's host wrote).
pub fn broadcast_bytes(world: &SimpleCommunicator, bytes: &mut [u8], stats: &mut CommStats) {
    let t = Instant::now();
    world.process_at_rank(0).broadcast_into(bytes);
    stats.wait_seconds += t.elapsed().as_secs_f64();
    stats.broadcasts += 1;
}

/// A rank's failure as it travels to rank 0: the failing instruction (`u64::MAX` when
/// the failure is not one of an instruction), its error kind, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureInfo {
    pub index: u64,
    pub kind: u32,
    pub message: String,
}

/// Whether any rank failed, and which was the lowest: every rank learns that rank, and
/// rank 0 also gets its failure. Every rank must call it at the same point.
pub fn agree_on_failure(
    world: &SimpleCommunicator,
    mine: Option<&FailureInfo>,
) -> Option<(i32, Option<FailureInfo>)> {
    let me = world.rank();
    let flag = if mine.is_some() { me } else { i32::MAX };
    let mut first = i32::MAX;
    world.all_reduce_into(&flag, &mut first, SystemOperation::min());
    if first == i32::MAX {
        return None;
    }
    if first == me {
        if me != 0 {
            let f = mine.expect("this rank failed");
            let p = world.process_at_rank(0);
            let text = f.message.as_bytes();
            let head = [f.index, u64::from(f.kind), text.len() as u64];
            p.send_with_tag(&head[..], FAILURE);
            p.send_with_tag(text, FAILURE);
            return Some((first, None));
        }
        return Some((first, mine.cloned()));
    }
    if me != 0 {
        return Some((first, None));
    }
    let p = world.process_at_rank(first);
    let mut head = [0u64; 3];
    p.receive_into_with_tag(&mut head[..], FAILURE);
    let mut text = vec![0u8; head[2] as usize];
    p.receive_into_with_tag(&mut text[..], FAILURE);
    Some((
        first,
        Some(FailureInfo {
            index: head[0],
            kind: head[1] as u32,
            message: String::from_utf8_lossy(&text).into_owned(),
        }),
    ))
}

/// Sums `values` over the ranks onto rank 0 (other ranks get zeros).
pub fn sum_to_root(world: &SimpleCommunicator, values: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; values.len()];
    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        root.reduce_into_root(values, &mut out[..], SystemOperation::sum());
    } else {
        root.reduce_into(values, SystemOperation::sum());
    }
    out
}

/// Every rank's `mine` (of `counts[r]` bytes on rank r), concatenated in rank order, on
/// every rank.
pub fn all_gather_bytes(
    world: &SimpleCommunicator,
    mine: &[u8],
    counts: &[usize],
    stats: &mut CommStats,
) -> Result<Vec<u8>, String> {
    let total: usize = counts.iter().sum();
    if total > i32::MAX as usize {
        return Err(format!("{total} bytes of partials exceed one MPI message"));
    }
    let me = world.rank() as usize;
    if counts.get(me) != Some(&mine.len()) {
        // Every rank derives `counts` from the same plan; a mismatch is this engine's bug,
        // and MPI would abort the job on it.
        panic!(
            "rank {me} gathers {} bytes where the plan says {:?}",
            mine.len(),
            counts.get(me)
        );
    }
    let counts: Vec<i32> = counts.iter().map(|&c| c as i32).collect();
    let displs: Vec<i32> = counts
        .iter()
        .scan(0i32, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u8; total];
    if total == 0 {
        return Ok(all); // every rank has the same counts: none calls MPI
    }
    // An empty slice's address is 1, which Open MPI takes for MPI_IN_PLACE (and then
    // fails the call): a rank with nothing to give sends from a real address.
    static NOTHING: [u8; 1] = [0];
    let mine = if mine.is_empty() { &NOTHING[..0] } else { mine };
    let t = Instant::now();
    {
        let mut part = mpi::datatype::PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        world.all_gather_varcount_into(mine, &mut part);
    }
    stats.wait_seconds += t.elapsed().as_secs_f64();
    stats.allgathers += 1;
    stats.bytes_sent += mine.len() as u64;
    stats.bytes_received += (total - mine.len()) as u64;
    Ok(all)
}
