// ExpectSameTraining: two Trainers that must train alike (the same model and order from two data
// paths: IDX files, an LMDB, an application's DataSource) take `steps` steps side by side with the
// same loss at every step, bit for bit, and then evaluate to the same accuracy and loss.
//
//   ExpectSameTraining(*from_idx, *from_db, 7);
#ifndef BRAID_TESTS_TESTING_SAME_TRAINING_H_
#define BRAID_TESTS_TESTING_SAME_TRAINING_H_

#include <gtest/gtest.h>

#include "braid/trainer.h"

namespace braid {

inline void ExpectSameTraining(Trainer& a, Trainer& b, int steps) {
  for (int step = 0; step < steps; ++step) {
    double a_loss = 0, b_loss = 0;
    ASSERT_TRUE(a.Step(&a_loss).ok());
    ASSERT_TRUE(b.Step(&b_loss).ok());
    EXPECT_EQ(a_loss, b_loss) << "step " << step;
  }
  double a_accuracy = 0, a_loss = 0, b_accuracy = 0, b_loss = 0;
  ASSERT_TRUE(a.Evaluate(&a_accuracy, &a_loss).ok());
  ASSERT_TRUE(b.Evaluate(&b_accuracy, &b_loss).ok());
  EXPECT_EQ(a_accuracy, b_accuracy);
  EXPECT_EQ(a_loss, b_loss);
}

}  // namespace braid

#endif  // BRAID_TESTS_TESTING_SAME_TRAINING_H_
