#include <string>
#include <vector>

#include "distflow/common_runtime/device_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceAttributes Device(const std::string& name, uint64_t incarnation = 1) {
  DeviceAttributes d;
  d.set_name(name);
  d.set_incarnation(incarnation);
  return d;
}

TEST(DeviceSetTest, KeepsAStablePreferenceOrder) {
  DeviceSet set;
  ASSERT_TRUE(
      set.AddDevice(Device("/job:w/replica:0/task:1/device:CPU:0")).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:w/replica:0/task:0/device:ACCEL:0")).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:10")).ok());
  ASSERT_TRUE(set.AddDevice(Device("/job:w/replica:0/task:0/cpu:2")).ok());
  EXPECT_THAT(set.DeviceNames(),
              ElementsAre("/job:w/replica:0/task:0/device:CPU:2",
                          "/job:w/replica:0/task:0/device:CPU:10",
                          "/job:w/replica:0/task:1/device:CPU:0",
                          "/job:w/replica:0/task:0/device:ACCEL:0"));
  EXPECT_EQ(set.devices()[3]->device_type(), "ACCEL");
}

TEST(DeviceSetTest, LooksUpByNameAndMatchesPartialNames) {
  DeviceSet set;
  ASSERT_TRUE(
      set.AddDevice(Device("/job:ps/replica:0/task:0/device:CPU:0", 7)).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:0")).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:w/replica:0/task:0/device:CPU:1")).ok());
  const DeviceAttributes* ps =
      set.FindDeviceByName("/job:ps/replica:0/task:0/cpu:0");
  ASSERT_NE(ps, nullptr);
  EXPECT_EQ(ps->incarnation(), 7u);
  EXPECT_EQ(ps->device_type(), "CPU");
  EXPECT_EQ(set.FindDeviceByName("/job:ps/replica:0/task:1/device:CPU:0"),
            nullptr);
  EXPECT_EQ(set.FindDeviceByName("/job:ps"), nullptr);
  EXPECT_EQ(set.FindDeviceByName("garbage"), nullptr);

  ParsedDeviceName spec;
  ASSERT_TRUE(device_name::Parse("/job:w/device:CPU:*", &spec));
  auto matches = set.FindMatchingDevices(spec);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0]->name(), "/job:w/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(set.FindMatchingDevices(ParsedDeviceName()).size(), 3u);
}

TEST(DeviceSetTest, ClientDeviceDefaultsToTheFirstCpu) {
  DeviceSet set;
  EXPECT_EQ(set.client_device(), nullptr);
  ASSERT_TRUE(
      set.AddDevice(Device("/job:a/replica:0/task:0/device:ACCEL:0")).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:b/replica:0/task:0/device:CPU:0")).ok());
  ASSERT_TRUE(
      set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0")).ok());
  EXPECT_EQ(set.client_device()->name(),
            "/job:a/replica:0/task:0/device:CPU:0");
  ASSERT_TRUE(set.SetClientDevice("/job:b/replica:0/task:0/device:CPU:0").ok());
  EXPECT_EQ(set.client_device()->name(),
            "/job:b/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(set.SetClientDevice("/job:c/replica:0/task:0/device:CPU:0").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceSetTest, RejectsBadDevices) {
  DeviceSet set;
  ASSERT_TRUE(
      set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0")).ok());
  absl::Status s =
      set.AddDevice(Device("/job:a/replica:0/task:0/device:CPU:0"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("already"));
  s = set.AddDevice(Device("/job:a/device:CPU:1"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:a/device:CPU:1"));
  DeviceAttributes wrong_type = Device("/job:a/replica:0/task:0/device:CPU:1");
  wrong_type.set_device_type("GPU");
  EXPECT_EQ(set.AddDevice(wrong_type).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(set.size(), 1);
}

}  // namespace
}  // namespace distflow
