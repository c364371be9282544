//===- IntrusiveLru.h - O(1) LRU order over small dense ids -----*- C++ -*-===//
//
// A doubly linked list of ids in [0, capacity), its links in a flat array
// indexed by id: the ids are the nodes, so nothing allocates per insertion
// and any member can leave from the middle in O(1) (a prefix hit claims a
// *named* cached block; a restore refreshes a *named* checkpoint). The
// front is the least recently pushed member, the next victim.
//
// The pools keep their metadata in their own arrays; only the links live
// here, in a parallel array of 8 bytes per id, so the hot metadata stays
// 16 bytes per entry (see BlockPool.h).
//
// An id that is not a member has both links kNil; `contains` relies on
// that, and `pushBack`/`unlink` keep it. Silent failure modes (asserted in
// debug builds only; release builds corrupt the list): pushing an id that
// is already a member, unlinking one that is not, or an id outside
// [0, capacity).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_DETAIL_INTRUSIVELRU_H
#define POOLRT_DETAIL_INTRUSIVELRU_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace poolrt {
namespace detail {

class IntrusiveLru {
public:
  static constexpr int32_t kNil = -1;

  IntrusiveLru() = default;
  explicit IntrusiveLru(size_t capacity) : links(capacity) {}

  /// Make room for ids [0, n); new ids are not members. Never shrinks.
  void reserveIds(size_t n) {
    if (n > links.size())
      links.resize(n);
  }
  size_t capacity() const { return links.size(); }

  bool empty() const { return head == kNil; }
  /// The least recently pushed member (the next victim), or kNil.
  int32_t front() const { return head; }
  /// The most recently pushed member, or kNil.
  int32_t back() const { return tail; }
  /// The member after / before `id` in LRU order, or kNil.
  int32_t next(int32_t id) const { return links[size_t(id)].next; }
  int32_t prev(int32_t id) const { return links[size_t(id)].prev; }
  bool contains(int32_t id) const {
    return links[size_t(id)].prev != kNil || head == id;
  }

  /// Append `id` (not a member) as the most recently used.
  void pushBack(int32_t id) {
    assert(!contains(id) && "IntrusiveLru: id already a member");
    Link &l = links[size_t(id)];
    l.prev = tail;
    l.next = kNil;
    if (tail != kNil)
      links[size_t(tail)].next = id;
    else
      head = id;
    tail = id;
  }

  /// Prepend `id` (not a member) as the least recently used.
  void pushFront(int32_t id) {
    assert(!contains(id) && "IntrusiveLru: id already a member");
    Link &l = links[size_t(id)];
    l.next = head;
    l.prev = kNil;
    if (head != kNil)
      links[size_t(head)].prev = id;
    else
      tail = id;
    head = id;
  }

  /// Make member `id` the least recently used: the next victim.
  void moveToFront(int32_t id) {
    assert(contains(id) && "IntrusiveLru: id not a member");
    if (head == id)
      return;
    unlink(id);
    pushFront(id);
  }

  /// Make member `id` the most recently used (unlink, then pushBack).
  void moveToBack(int32_t id) {
    assert(contains(id) && "IntrusiveLru: id not a member");
    if (tail == id)
      return;
    unlink(id);
    pushBack(id);
  }

  /// Take member `id` out, wherever it is.
  void unlink(int32_t id) {
    assert(contains(id) && "IntrusiveLru: id not a member");
    Link &l = links[size_t(id)];
    if (l.prev != kNil)
      links[size_t(l.prev)].next = l.next;
    else
      head = l.next;
    if (l.next != kNil)
      links[size_t(l.next)].prev = l.prev;
    else
      tail = l.prev;
    l.prev = l.next = kNil;
  }

private:
  struct Link {
    int32_t prev = kNil;
    int32_t next = kNil;
  };

public:
  /// Drop every member; O(capacity).
  void clear() {
    for (Link &l : links)
      l = Link{};
    head = tail = kNil;
  }

private:
  std::vector<Link> links;
  int32_t head = kNil, tail = kNil;
};

} // namespace detail
} // namespace poolrt

#endif // POOLRT_DETAIL_INTRUSIVELRU_H
