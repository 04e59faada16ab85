#include "server/grpc/stream_window.h"

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(StreamWindowTest, OneRequestAtATimeUntilAReplyShowsItsSize) {
  StreamWindow window({/*max_outstanding=*/256, /*max_buffer_bytes=*/1000});
  EXPECT_TRUE(window.MayRead());
  window.Started();
  EXPECT_FALSE(window.MayRead());
  ASSERT_TRUE(window.Completed(100));
  window.Push(100);
  EXPECT_TRUE(window.MayRead());
}

TEST(StreamWindowTest, StopsReadingAtTheRequestLimit) {
  StreamWindow window({/*max_outstanding=*/3, /*max_buffer_bytes=*/1 << 20});
  window.Started();
  ASSERT_TRUE(window.Completed(10));
  window.Push(10);
  window.Written(10);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(window.MayRead());
    window.Started();
  }
  EXPECT_TRUE(window.MayRead());
  window.Started();
  EXPECT_FALSE(window.MayRead());  // 3 started
  ASSERT_TRUE(window.Completed(10));
  window.Push(10);
  EXPECT_FALSE(window.MayRead());  // 2 started + 1 buffered
  window.Written(10);
  EXPECT_TRUE(window.MayRead());
}

TEST(StreamWindowTest, StopsReadingWhenTheBufferedAndExpectedRepliesFillTheBuffer) {
  StreamWindow window({/*max_outstanding=*/100, /*max_buffer_bytes=*/1000});
  window.Started();
  ASSERT_TRUE(window.Completed(300));
  window.Push(300);               // the largest reply so far: 300
  EXPECT_TRUE(window.MayRead());  // 300 buffered + 1 x 300 expected <= 1000
  window.Started();
  EXPECT_TRUE(window.MayRead());  // 300 + 2 x 300 = 900
  window.Started();
  EXPECT_FALSE(window.MayRead());  // 300 + 3 x 300 = 1200
  ASSERT_TRUE(window.Completed(300));
  window.Push(300);
  ASSERT_TRUE(window.Completed(300));
  window.Push(300);
  EXPECT_EQ(window.buffered_bytes(), 900);
  EXPECT_EQ(window.pending(), 0);
  EXPECT_FALSE(window.MayRead());  // 900 + 300 > 1000
  window.Written(300);
  EXPECT_TRUE(window.MayRead());  // 600 + 300
}

TEST(StreamWindowTest, AReplyThatDoesNotFitIsRefusedUnlessTheBufferIsEmpty) {
  StreamWindow window({/*max_outstanding=*/100, /*max_buffer_bytes=*/1000});
  window.Started();
  ASSERT_TRUE(window.Completed(10));  // small replies first: the window opens wide
  window.Push(10);
  window.Written(10);
  window.Started();
  EXPECT_TRUE(window.MayRead());
  window.Started();
  // Alone, a reply larger than the whole buffer goes through.
  ASSERT_TRUE(window.Completed(5000));
  window.Push(5000);
  // Behind it, the next one must wait for space the client never frees.
  EXPECT_FALSE(window.Completed(10));
  window.Push(40);  // the short error that answers it instead
  EXPECT_EQ(window.buffered(), 2);
  EXPECT_EQ(window.buffered_bytes(), 5040);
  EXPECT_FALSE(window.MayRead());
  window.Written(5000);
  window.Written(40);
  EXPECT_EQ(window.buffered_bytes(), 0);
  EXPECT_EQ(window.pending(), 0);
}

TEST(StreamWindowTest, ClearDropsBufferedReplies) {
  StreamWindow window({/*max_outstanding=*/2, /*max_buffer_bytes=*/100});
  window.Started();
  window.Started();
  ASSERT_TRUE(window.Completed(60));
  window.Push(60);
  window.Clear();
  EXPECT_EQ(window.buffered(), 0);
  EXPECT_EQ(window.buffered_bytes(), 0);
  EXPECT_EQ(window.pending(), 1);
}

}  // namespace
}  // namespace onyx::server
