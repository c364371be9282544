//===- ByteLru.h - A byte-capped LRU index (tier-private) ------*- C++ -*-===//
//
// The eviction order and byte count the host and disk tiers share: entries
// of a key, a size in bytes and a value, most recently used first. evictFor
// drops the least recently used until an incoming size fits the cap; what
// may never be stored (larger than the whole cap) is the caller's to refuse.
// Not thread-safe: its backend keeps it under its mutex (TierBackends.h).
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_TIER_BYTELRU_H
#define POOLRT_TIER_BYTELRU_H

#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

namespace poolrt {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class ByteLru {
public:
  struct Entry {
    Key key;
    int64_t bytes = 0;
    Value value;
  };

  explicit ByteLru(int64_t capBytes) : cap_(capBytes) {}
  // The index points into the list: never copied.
  ByteLru(const ByteLru &) = delete;
  ByteLru &operator=(const ByteLru &) = delete;

  int64_t cap() const { return cap_; }
  /// The sum of the entries' sizes (above the cap only after an insert
  /// that evictFor did not make room for).
  int64_t bytes() const { return bytes_; }
  /// How many entries evictFor has dropped (erase is not an eviction).
  int64_t evictions() const { return evictions_; }
  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  bool contains(const Key &key) const { return index_.count(key) != 0; }

  /// The entry of `key`, made the most recently used; null when none.
  const Entry *use(const Key &key) {
    auto it = index_.find(key);
    if (it == index_.end())
      return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &*it->second;
  }

  /// Adds an entry as the most recently used, replacing any of its key.
  /// Evicts nothing: evictFor makes the room first.
  void insert(Key key, int64_t bytes, Value value) {
    erase(key);
    order_.push_front(Entry{std::move(key), bytes, std::move(value)});
    index_[order_.front().key] = order_.begin();
    bytes_ += bytes;
  }

  /// Adds an entry as the least recently used, replacing any of its key:
  /// an order rebuilt from the most recent down.
  void insertLeastRecent(Key key, int64_t bytes, Value value) {
    erase(key);
    order_.push_back(Entry{std::move(key), bytes, std::move(value)});
    index_[order_.back().key] = std::prev(order_.end());
    bytes_ += bytes;
  }

  /// Removes the entry of `key`; whether there was one.
  bool erase(const Key &key) {
    auto it = index_.find(key);
    if (it == index_.end())
      return false;
    eraseAt(it);
    return true;
  }

  /// Evicts the least recently used entries until `incoming` more bytes fit
  /// under the cap or none is left (so an incoming size above the cap
  /// empties it), calling onEvict(entry) before each one goes.
  template <typename OnEvict> void evictFor(int64_t incoming, OnEvict &&onEvict) {
    while (bytes_ + incoming > cap_ && !order_.empty()) {
      auto victim = index_.find(order_.back().key);
      onEvict(static_cast<const Entry &>(*victim->second));
      eraseAt(victim);
      ++evictions_;
    }
  }
  void evictFor(int64_t incoming) {
    evictFor(incoming, [](const Entry &) {});
  }

  /// The keys, most recently used first.
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(order_.size());
    for (const Entry &e : order_)
      out.push_back(e.key);
    return out;
  }

private:
  using Order = std::list<Entry>;
  using Index = std::unordered_map<Key, typename Order::iterator, Hash>;
  void eraseAt(typename Index::iterator it) {
    bytes_ -= it->second->bytes;
    order_.erase(it->second);
    index_.erase(it);
  }

  const int64_t cap_;
  int64_t bytes_ = 0, evictions_ = 0;
  Order order_; // front: most recent
  Index index_;
};

} // namespace poolrt

#endif // POOLRT_TIER_BYTELRU_H
